import { avatarHash } from '../common/utils/avatar';
import { iso } from '../common/utils/time';
import { ClassMemberRow, ClassSummaryRow } from './classes.repository';
import { ClassMemberResponse, ClassSummaryResponse } from './dto/class.response';
import { ClassRole } from './entities/class-member.entity';

export function toClassSummary(row: ClassSummaryRow): ClassSummaryResponse {
  // Only OWNER and ADMIN may hand out the invite code; a personal class has none.
  const showInviteCode = !row.is_personal && row.my_role !== ClassRole.MEMBER;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    color: row.color,
    isPersonal: row.is_personal,
    ownerId: row.owner_id,
    schoolId: row.school_id,
    inviteCode: showInviteCode ? row.invite_code : null,
    myRole: row.my_role,
    memberCount: row.member_count,
    createdAt: iso(row.created_at)!,
  };
}

export function toClassMember(row: ClassMemberRow): ClassMemberResponse {
  return {
    userId: row.user_id,
    nickname: row.nickname,
    avatarHash: avatarHash(row.email),
    role: row.role,
    joinedAt: iso(row.joined_at)!,
  };
}
