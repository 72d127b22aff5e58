import { Column, Entity } from 'typeorm';
import { StoredAttachment } from '../../files/stored-attachment.entity';

@Entity('submission_attachments')
export class SubmissionAttachment extends StoredAttachment {
  @Column({ type: 'uuid' })
  submissionId: string;

  /** The version of the submission this attachment was added in. */
  @Column({ type: 'integer', default: 1 })
  addedVersion: number;
}
