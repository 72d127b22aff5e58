import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { QueryDeepPartialEntity } from 'typeorm';
import { TaskAccess } from '../access/access.service';
import { ParseInput, ParseResult } from '../ai/ai-provider';
import { AiService } from '../ai/ai.service';
import { ParseDraftDto } from '../ai/dto/parse-text.dto';
import { DraftParseResultResponse } from '../ai/dto/parse-result.response';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError } from '../common/errors/app-error';
import { RunningJobs } from '../common/jobs/running-jobs';
import { FileStorage } from '../files/file-storage';
import { DraftMarkdownResponse } from './dto/task.response';
import { Task } from './entities/task.entity';
import { TasksRepository } from './tasks.repository';
import { Transactions } from '../database/transactions';

/** Text-like attachments are read into the parse input, each and all together bounded. */
const TEXT_ATTACHMENT = /^text\//i;
const TEXT_EXTENSION = /\.(?:md|markdown|txt|csv)$/i;
const ATTACHMENT_READ_MAX_BYTES = 64 * 1024;
const ATTACHMENTS_TEXT_MAX_CHARS = 20_000;
export const MARKDOWN_CACHE_TTL = '3 days';

function assertDraft(task: Task): void {
  if (task.isPublished) throw AppError.validation('Only a draft can be parsed; this task is published');
}

/** The draft's date fields after a parse: given values win; an older value that would contradict them goes. */
function parsedTimes(task: Task, result: ParseResult): QueryDeepPartialEntity<Task> {
  const option = result.timeOptions?.[0];
  const startAt = option?.startAt ? new Date(option.startAt) : null;
  const dueAt = option?.dueAt ? new Date(option.dueAt) : null;
  const changes: QueryDeepPartialEntity<Task> = {};
  if (startAt) changes.startAt = startAt;
  if (dueAt) changes.dueAt = dueAt;
  const mergedStart = startAt ?? task.startAt;
  const mergedDue = dueAt ?? task.dueAt;
  if (mergedStart && mergedDue && mergedDue < mergedStart) {
    // Only one side was parsed (a parsed pair is in order): the stored other side gives way.
    if (dueAt) changes.startAt = null;
    else changes.dueAt = null;
  }
  return changes;
}

/** Parsing drafts with their attachments, and the Markdown drafts cached for 3 days. */
@Injectable()
export class TaskDraftsService {
  private readonly logger = new Logger(TaskDraftsService.name);

  constructor(
    private readonly transactions: Transactions,
    private readonly ai: AiService,
    private readonly storage: FileStorage,
    private readonly jobs: RunningJobs,
    private readonly tasks: TasksRepository,
  ) {}

  /**
   * Parses `text` (else the stored sourceText) and the draft's text attachments, fills the draft from the
   * result and caches its Markdown. The model is called outside any transaction; the draft is locked and
   * checked again only to write. `access` comes from the route's `@TaskManagerRoute()`.
   */
  async parse({ taskId }: TaskAccess, user: AuthUser, dto: ParseDraftDto): Promise<DraftParseResultResponse> {
    const task = await this.tasks.findLive(taskId);
    if (!task) throw AppError.notFound('Task');
    assertDraft(task);
    const text = dto.text ?? task.sourceText;
    if (!text || text.trim().length === 0) {
      throw AppError.validation('text is required: the draft has no stored sourceText');
    }
    const input: ParseInput = { text, attachments: await this.readTextAttachments(taskId) };
    const result = await this.ai.parse(input, user);
    const markdownCached = await this.transactions.run(async (manager) => {
      const draft = await this.tasks.lockLive(manager, taskId);
      assertDraft(draft);
      const changes: QueryDeepPartialEntity<Task> = parsedTimes(draft, result);
      if (result.title !== null) changes.title = result.title;
      if (result.description !== null) changes.description = result.description;
      if (dto.text !== undefined) changes.sourceText = dto.text;
      await this.tasks.update(manager, taskId, changes);
      if (result.description !== null) {
        await this.tasks.cacheMarkdown(manager, taskId, result.description, MARKDOWN_CACHE_TTL);
      }
      return (await this.tasks.cachedMarkdown(manager, taskId)) !== null;
    });
    return { ...result, markdownCached };
  }

  async draftMarkdown({ taskId }: TaskAccess): Promise<DraftMarkdownResponse> {
    return { markdown: await this.tasks.cachedMarkdown(this.transactions.autocommit, taskId) };
  }

  /** Expired rows are never read (see cachedMarkdown); this only reclaims their space. */
  @Cron('0 17 * * * *', { name: 'task-markdown-cache-purge' })
  async purgeExpiredMarkdown(): Promise<number> {
    return (await this.jobs.run('tasks.markdown-cache-purge', () => this.deleteExpiredMarkdown())) ?? 0;
  }

  private async deleteExpiredMarkdown(): Promise<number> {
    const removed = await this.tasks.purgeExpiredMarkdown();
    if (removed > 0) this.logger.log({ removed }, 'Purged expired Markdown drafts');
    return removed;
  }

  /** The beginning of each text-like attachment, oldest first, within the size bounds. */
  private async readTextAttachments(taskId: string): Promise<ParseInput['attachments']> {
    const attachments = await this.tasks.listAttachments(taskId);
    const texts: ParseInput['attachments'] = [];
    let budget = ATTACHMENTS_TEXT_MAX_CHARS;
    for (const attachment of attachments) {
      if (budget <= 0) break;
      if (!TEXT_ATTACHMENT.test(attachment.mimeType ?? '') && !TEXT_EXTENSION.test(attachment.originalName))
        continue;
      const text = (await this.readPrefix(attachment.fileKey))?.slice(0, budget).trim();
      if (!text) continue;
      texts.push({ name: attachment.originalName, text });
      budget -= text.length;
    }
    return texts;
  }

  /** Up to ATTACHMENT_READ_MAX_BYTES of the file as UTF-8; null when it cannot be read. */
  private async readPrefix(fileKey: string): Promise<string | null> {
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of await this.storage.read(fileKey)) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= ATTACHMENT_READ_MAX_BYTES) break;
      }
      return new TextDecoder('utf-8').decode(Buffer.concat(chunks).subarray(0, ATTACHMENT_READ_MAX_BYTES));
    } catch (error) {
      this.logger.warn({ err: error, fileKey }, 'Could not read a task attachment for parsing');
      return null;
    }
  }
}
