import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('task_markdown_cache')
export class TaskMarkdownCache {
  @PrimaryColumn({ type: 'uuid' })
  taskId: string;

  @Column({ type: 'text' })
  markdown: string;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}
