import { Injectable } from '@nestjs/common';
import { AttachmentAccess } from '../access/access.service';
import { SubmissionsService } from '../submissions/submissions.service';
import { TaskAttachmentsService } from '../tasks/task-attachments.service';

/** Attachments named by their id alone, whatever they are attached to. */
@Injectable()
export class AttachmentsService {
  constructor(
    private readonly taskAttachments: TaskAttachmentsService,
    private readonly submissions: SubmissionsService,
  ) {}

  /**
   * Removes the attachment the way its own scoped route does (`DELETE /tasks/:taskId/attachments/:id`, or
   * `DELETE /tasks/:taskId/submissions/me/attachments/:id` with the late and lock rules), so the two answer
   * alike.
   */
  remove(access: AttachmentAccess, userId: string): Promise<void> {
    return access.submitterId === null
      ? this.taskAttachments.remove(access, access.attachmentId)
      : this.submissions.removeAttachment(access, userId, access.attachmentId);
  }
}
