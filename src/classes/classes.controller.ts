import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type ClassAccess } from '../access/access.service';
import { ClassManagerRoute, ClassRoute, CurrentAccess } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { ClassMembersService } from './class-members.service';
import { toClassMember, toClassSummary } from './classes.mapper';
import { ClassesService } from './classes.service';
import {
  ChangeMemberRoleDto,
  CreateClassDto,
  JoinClassDto,
  TransferOwnershipDto,
  UpdateClassDto,
} from './dto/class-fields.dto';
import { ClassMemberResponse, ClassSummaryResponse, InviteCodeResponse } from './dto/class.response';
import { ClassRole } from './entities/class-member.entity';
import { ApiNotModifiedResponse, IfMatch, IfMatchRoute, type IfMatchTags } from '../common/http/entity-tags';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

/** `:classId` is also checked by the ClassRoute guard; handlers that take the guard's access skip the param. */
const PERSONAL = 'FORBIDDEN: the personal class';
const NO_MEMBER = 'NOT_FOUND: the user is not a member';
const INVALID_BODY = 'VALIDATION_ERROR: invalid body';
const classId = (): ParameterDecorator => Param('classId', new ParseUUIDPipe());
const userId = (): ParameterDecorator => Param('userId', new ParseUUIDPipe());

@ApiTags('classes')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Missing or invalid token' })
@Controller('classes')
export class ClassesController {
  constructor(
    private readonly classes: ClassesService,
    private readonly members: ClassMembersService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'All classes of the caller: the personal class first, then by creation' })
  @ApiOkResponse({ type: [ClassSummaryResponse] })
  async list(@CurrentUser() user: AuthUser): Promise<ClassSummaryResponse[]> {
    return (await this.classes.list(user.id)).map(toClassSummary);
  }

  @Post()
  @ApiOperation({ summary: 'Create a shared class; the caller becomes OWNER' })
  @ApiCreatedResponse({ type: ClassSummaryResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'Invalid body or unknown school' })
  @IdempotentWrite()
  async create(@CurrentUser() user: AuthUser, @Body() dto: CreateClassDto): Promise<ClassSummaryResponse> {
    return toClassSummary(await this.classes.create(user.id, dto));
  }

  @Post('join')
  @HttpCode(200)
  @ApiOperation({ summary: 'Join a class by invite code (trimmed, case-insensitive) as MEMBER' })
  @ApiOkResponse({ type: ClassSummaryResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'Invalid body' })
  @ApiForbiddenResponse({
    type: ErrorResponse,
    description: "Class restricted to a school that is not the caller's",
  })
  @ApiNotFoundResponse({ type: ErrorResponse, description: 'Invite code unknown or replaced' })
  @ApiConflictResponse({ type: ErrorResponse, description: 'Already a member' })
  @IdempotentWrite()
  async join(@CurrentUser() user: AuthUser, @Body() dto: JoinClassDto): Promise<ClassSummaryResponse> {
    return toClassSummary(await this.classes.join(user.id, dto.inviteCode));
  }

  @Get(':classId')
  @ClassRoute()
  @ApiNotModifiedResponse()
  @ApiOperation({ summary: 'One class; caller must be a member' })
  @ApiOkResponse({ type: ClassSummaryResponse })
  async get(@classId() id: string, @CurrentUser() user: AuthUser): Promise<ClassSummaryResponse> {
    return toClassSummary(await this.classes.get(user.id, id));
  }

  @Patch(':classId')
  @ClassManagerRoute()
  @ApiNotModifiedResponse()
  @IfMatchRoute()
  @ApiOperation({ summary: 'Change name, description (null clears) or color; OWNER or ADMIN' })
  @ApiOkResponse({ type: ClassSummaryResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: INVALID_BODY })
  @IdempotentWrite()
  async update(
    @classId() id: string,
    @CurrentUser() user: AuthUser,
    @Body() dto: UpdateClassDto,
    @IfMatch() ifMatch: IfMatchTags,
  ): Promise<ClassSummaryResponse> {
    return toClassSummary(await this.classes.update(user.id, id, dto, ifMatch));
  }

  @Delete(':classId')
  @HttpCode(204)
  @ClassRoute({ roles: [ClassRole.OWNER], forbidden: PERSONAL })
  @ApiOperation({ summary: 'Delete the class with its tasks, submissions and files; OWNER only' })
  @ApiNoContentResponse()
  async remove(@classId() id: string, @CurrentUser() user: AuthUser): Promise<void> {
    await this.classes.remove(user.id, id);
  }

  @Get(':classId/members')
  @ClassRoute()
  @ApiOperation({ summary: 'Members: OWNER, ADMINs, MEMBERs, each by join time' })
  @ApiOkResponse({ type: [ClassMemberResponse] })
  async listMembers(@classId() id: string): Promise<ClassMemberResponse[]> {
    return (await this.members.list(id)).map(toClassMember);
  }

  @Patch(':classId/members/:userId')
  @ClassRoute({ roles: [ClassRole.OWNER], forbidden: PERSONAL, notFound: NO_MEMBER })
  @ApiOperation({ summary: 'Make a member ADMIN or MEMBER; OWNER only' })
  @ApiOkResponse({ type: ClassMemberResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: INVALID_BODY })
  @IdempotentWrite()
  async changeRole(
    @userId() targetId: string,
    @CurrentAccess() access: ClassAccess,
    @CurrentUser() user: AuthUser,
    @Body() dto: ChangeMemberRoleDto,
  ): Promise<ClassMemberResponse> {
    return toClassMember(await this.members.changeRole(access, user.id, targetId, dto.role));
  }

  @Delete(':classId/members/:userId')
  @HttpCode(204)
  @ClassRoute({
    forbidden: 'FORBIDDEN: the role does not allow removing this member, or the target is the OWNER',
    notFound: NO_MEMBER,
  })
  @ApiOperation({ summary: 'Remove a member or leave; the OWNER is never removed' })
  @ApiNoContentResponse()
  async removeMember(
    @classId() id: string,
    @userId() targetId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    await this.members.remove(id, user.id, targetId);
  }

  @Post(':classId/transfer')
  @HttpCode(200)
  @ClassRoute({ roles: [ClassRole.OWNER], forbidden: PERSONAL, notFound: NO_MEMBER })
  @ApiOperation({ summary: 'Transfer ownership to a member; the caller becomes ADMIN' })
  @ApiOkResponse({ type: ClassSummaryResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: INVALID_BODY })
  @IdempotentWrite()
  async transfer(
    @CurrentAccess() access: ClassAccess,
    @CurrentUser() user: AuthUser,
    @Body() dto: TransferOwnershipDto,
  ): Promise<ClassSummaryResponse> {
    return toClassSummary(await this.members.transfer(access, user.id, dto.newOwnerId));
  }

  @Post(':classId/invite-code')
  @HttpCode(200)
  @ClassManagerRoute({ forbidden: PERSONAL })
  @ApiOperation({ summary: 'Replace the invite code; the old one stops working at once' })
  @ApiOkResponse({ type: InviteCodeResponse })
  @IdempotentWrite()
  async rotateInviteCode(
    @CurrentAccess() access: ClassAccess,
    @CurrentUser() user: AuthUser,
  ): Promise<InviteCodeResponse> {
    return { inviteCode: await this.classes.rotateInviteCode(access, user.id) };
  }
}
