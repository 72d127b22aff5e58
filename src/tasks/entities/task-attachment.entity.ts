import { Column, Entity } from 'typeorm';
import { StoredAttachment } from '../../files/stored-attachment.entity';

@Entity('task_attachments')
export class TaskAttachment extends StoredAttachment {
  @Column({ type: 'uuid' })
  taskId: string;
}
