import { Injectable, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { TaskAccess } from '../access/access.service';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { zonedIsoFormatter } from '../common/utils/zoned-time';
import { CsvStreams } from './csv-streams';
import { scoreNumber } from './submissions.mapper';
import { ExportRow, SubmissionsRepository } from './submissions.repository';

const EXPORT_HEADER = [
  'Nickname',
  'School',
  'Student number',
  'Class',
  'Task title',
  'First submission time',
  'Last update time',
  'Score',
];

/** Rows fetched from the cursor per round trip; memory holds about this many rows at a time. */
const CURSOR_BATCH = 500;

/** The CSV export of a task's submissions: one row per class member, streamed (see `CsvStreams`). */
@Injectable()
export class SubmissionsExportService {
  constructor(
    private readonly csv: CsvStreams,
    private readonly submissions: SubmissionsRepository,
  ) {}

  /** `access`: the route's `@TaskManagerRoute()`. */
  export({ taskId }: TaskAccess, user: AuthUser, response: Response): Promise<StreamableFile> {
    const time = zonedIsoFormatter(user.timezone);
    return this.csv.stream(response, {
      filename: `task-${taskId}-submissions.csv`,
      context: { taskId },
      open: (client) => ({
        header: EXPORT_HEADER,
        rows: this.submissions.exportRows(client, taskId, CURSOR_BATCH),
        record: (row: ExportRow) => {
          const score = scoreNumber(row.score);
          return [
            row.displayName,
            row.schoolName,
            row.studentId,
            row.className,
            row.title,
            row.firstSubmittedAt && time(row.firstSubmittedAt),
            row.lastUpdatedAt && time(row.lastUpdatedAt),
            score === null ? null : String(score),
          ];
        },
      }),
    });
  }
}
