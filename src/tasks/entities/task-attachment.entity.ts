import { Column, Entity } from 'typeorm';
import { StoredAttachment } from '../../files/stored-attachment.entity';

@Entity('task_attachments')
export class TaskAttachment extends StoredAttachment {
  @Column({ type: 'uuid' })
  taskId: string;

  /** Whose storage quota the file counts to; null once that user is deleted. */
  @Column({ type: 'uuid', nullable: true })
  uploadedBy: string | null;
}
