import { Body, Controller, Get, Patch } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiOkResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { UserChanges } from '../common/events/user-changes';
import { UpdateMeDto } from './dto/update-me.dto';
import { UserDto } from './dto/user.dto';
import { UsersService } from './users.service';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

@ApiTags('users')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'UNAUTHORIZED: missing, invalid, expired or revoked token' })
@Controller('users/me')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly userChanges: UserChanges,
  ) {}

  @Get()
  @ApiOkResponse({ type: UserDto })
  getMe(@CurrentUser() user: AuthUser): Promise<UserDto> {
    return this.users.getProfile(user.id);
  }

  @Patch()
  @ApiOkResponse({ type: UserDto })
  @ApiBadRequestResponse({
    description: 'VALIDATION_ERROR: bad field, unknown schoolId, schoolId without studentId, bad time zone',
  })
  @ApiConflictResponse({ description: 'CONFLICT: student number already taken in that school' })
  @IdempotentWrite()
  async updateMe(@CurrentUser() user: AuthUser, @Body() body: UpdateMeDto): Promise<UserDto> {
    const updated = await this.users.updateProfile(user.id, body);
    // The time zone is part of the cached token user; UsersService stays free of it for the CLI.
    this.userChanges.changed(user.id);
    return updated;
  }
}
