import { iso } from '../common/utils/time';
import { UserDto } from './dto/user.dto';
import { User } from './entities/user.entity';

/** `user.school` must be loaded when the user has a school. */
export function toUserDto(user: User): UserDto {
  return {
    id: user.id,
    email: user.email,
    nickname: user.nickname,
    schoolId: user.schoolId,
    schoolName: user.school?.name ?? null,
    studentId: user.studentId,
    timezone: user.timezone,
    isActive: user.isActive,
    createdAt: iso(user.createdAt)!,
  };
}
