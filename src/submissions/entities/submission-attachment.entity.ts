import { Column, Entity } from 'typeorm';
import { StoredAttachment } from '../../files/stored-attachment.entity';

@Entity('submission_attachments')
export class SubmissionAttachment extends StoredAttachment {
  @Column({ type: 'uuid' })
  submissionId: string;
}
