import { avatarHash } from '../common/utils/avatar';
import { GradebookRowResponse } from './dto/gradebook.dto';
import { GradebookRowJson } from './gradebook.repository';

/** The row as the API shows it: the avatar hash instead of the e-mail, without the sort keys. */
export function toGradebookRow(row: GradebookRowJson): GradebookRowResponse {
  return {
    userId: row.userId,
    nickname: row.nickname,
    avatarHash: avatarHash(row.email),
    studentId: row.studentId,
    cells: row.cells,
    graded: row.graded,
    totalScore: row.totalScore,
  };
}
