import { MANAGER_ROLES } from '../classes/entities/class-member.entity';
import { toAttachmentResponse } from '../files/attachment.response';
import { storedAttachmentFromJson } from '../files/attachments.sql';
import {
  MyTaskSummaryResponse,
  TaskDetailResponse,
  TaskSummaryResponse,
  TaskUserStateResponse,
} from './dto/task.response';
import { ExtensionResponse } from './dto/extension.dto';
import { RubricResponse } from './dto/rubric.dto';
import { ExtensionRow } from './task-extensions.repository';
import { RubricRow } from './task-rubrics.repository';
import { TaskRow, UserStateRow } from './tasks.repository';

/** Timestamps already as JSON strings (`isoSql`). */
export function toUserStateResponse(row: UserStateRow): TaskUserStateResponse {
  return {
    viewedAt: row.viewed_at,
    tags: row.tags ?? [],
    sortOrder: row.sort_order,
    submittedAt: row.submitted_at,
  };
}

/** Null until the caller has viewed, tagged, sorted or submitted (TaskUserState in OpenAPI). */
function userStateOf(row: UserStateRow): TaskUserStateResponse | null {
  const untouched = !row.viewed_at && !row.tags?.length && row.sort_order === null && !row.submitted_at;
  return untouched ? null : toUserStateResponse(row);
}

export function toSummaryResponse(row: TaskRow): TaskSummaryResponse {
  return {
    id: row.id,
    classId: row.class_id,
    className: row.class_name,
    title: row.title,
    startAt: row.start_at,
    dueAt: row.due_at,
    myDueAt: row.my_due_at,
    hasExtension: row.has_extension,
    allowLateSubmission: row.allow_late_submission,
    gradeRelease: row.grade_release,
    hasRubric: row.rubric_max_points !== null,
    maxPoints: row.rubric_max_points === null ? null : Number(row.rubric_max_points),
    blockedBy: row.blocked_by,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    submittedCount: row.submitted_count,
    memberCount: row.member_count,
    userState: userStateOf(row),
    isPublished: row.is_published,
    publishedAt: row.published_at,
    sourceText: row.source_text,
    isLocked: row.is_locked,
  };
}

export function toMySummaryResponse(row: TaskRow): MyTaskSummaryResponse {
  return { ...toSummaryResponse(row), classColor: row.class_color };
}

export function toDetailResponse(row: TaskRow): TaskDetailResponse {
  return {
    ...toSummaryResponse(row),
    description: row.description,
    attachments: (row.attachments ?? []).map((json) => toAttachmentResponse(storedAttachmentFromJson(json))),
    stats: MANAGER_ROLES.includes(row.role)
      ? {
          memberCount: row.member_count,
          viewedCount: row.viewed_count ?? 0,
          submittedCount: row.submitted_count,
        }
      : null,
  };
}

export function toExtensionResponse(row: ExtensionRow): ExtensionResponse {
  return {
    taskId: row.task_id,
    userId: row.user_id,
    nickname: row.nickname,
    dueAt: row.due_at,
    allowLateSubmission: row.allow_late_submission,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Levels and points come from the row's JSON (numbers there); `max_points` is numeric text. */
export function toRubricResponse(row: RubricRow): RubricResponse {
  return {
    taskId: row.task_id,
    criteria: row.criteria.map((criterion) => ({
      id: criterion.id,
      title: criterion.title,
      description: criterion.description,
      levels: criterion.levels.map((level) => ({ id: level.id, title: level.title, points: level.points })),
    })),
    maxPoints: Number(row.max_points),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
