import { Injectable, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { AccessService, ClassAccess } from '../access/access.service';
import { MANAGER_ROLES } from '../access/class-roles';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/utils/uuid';
import { CsvStreams } from './csv-streams';
import { GradebookQuery, GradebookResponse, OwnGradebookResponse } from './dto/gradebook.dto';
import { toGradebookRow } from './gradebook.mapper';
import { GradebookCsvRow, GradebookPlace, GradebookRepository } from './gradebook.repository';

/** CSV rows fetched from the cursor per round trip; each holds a cell per task. */
const CSV_CURSOR_BATCH = 100;
const CSV_HEADER = ['Nickname', 'Student number'];

/**
 * The gradebook's cursor: the sort keys of the previous page's last row (rows are ordered by display name, not
 * by a time, so the place is a name and an id), as base64url JSON.
 */
export function encodeGradebookCursor(place: GradebookPlace): string {
  return Buffer.from(JSON.stringify([place.sortLower, place.sortName, place.userId])).toString('base64url');
}

/** The place a cursor names; 400 VALIDATION_ERROR when it is malformed. */
export function decodeGradebookCursor(cursor: string): GradebookPlace {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 3 &&
    typeof parsed[0] === 'string' &&
    typeof parsed[1] === 'string' &&
    typeof parsed[2] === 'string' &&
    isUuid(parsed[2])
  ) {
    return { sortLower: parsed[0], sortName: parsed[1], userId: parsed[2] };
  }
  throw AppError.validation('cursor is malformed');
}

/** The class gradebook: students by tasks, built by the database in one statement per page. */
@Injectable()
export class GradebookService {
  constructor(
    private readonly gradebook: GradebookRepository,
    private readonly access: AccessService,
    private readonly csv: CsvStreams,
  ) {}

  /**
   * A page, in one statement when the caller is the class's OWNER or an ADMIN (the statement decides access,
   * `@ClassRoute({ inStatement: true })`); otherwise AccessService tells why not (404, 403), and a caller who
   * became a manager meanwhile is answered by a second try.
   */
  async page(classId: string, userId: string, { cursor, limit }: GradebookQuery): Promise<GradebookResponse> {
    const after = cursor === undefined ? null : decodeGradebookCursor(cursor);
    let found = await this.gradebook.page(classId, userId, after, limit + 1);
    if (!found) {
      await this.access.requireClassRole(classId, userId, MANAGER_ROLES);
      found = await this.gradebook.page(classId, userId, after, limit + 1);
      if (!found) throw AppError.forbidden();
    }
    const { tasks, rows } = found;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      tasks,
      rows: page.map(toGradebookRow),
      nextCursor:
        rows.length > limit
          ? encodeGradebookCursor({ sortLower: last.sortLower, sortName: last.sortName, userId: last.userId })
          : null,
    };
  }

  /** The caller's own row, released grades only; one statement for a member (access decided as by `page`). */
  async mine(classId: string, userId: string): Promise<OwnGradebookResponse> {
    let found = await this.gradebook.ownRow(classId, userId);
    if (!found) {
      await this.access.requireClassRole(classId, userId);
      found = await this.gradebook.ownRow(classId, userId);
      if (!found) throw AppError.forbidden();
    }
    return { tasks: found.tasks, row: toGradebookRow(found.row) };
  }

  /** The CSV: one line per MEMBER, a column per task (its title), streamed; `access`: `@ClassManagerRoute()`. */
  csvExport({ classId }: ClassAccess, response: Response): Promise<StreamableFile> {
    return this.csv.stream(response, {
      filename: `class-${classId}-gradebook.csv`,
      context: { classId },
      open: async (client) => {
        const columns = await this.gradebook.columns(client, classId);
        return {
          header: [...CSV_HEADER, ...columns.map((column) => column.title)],
          rows: this.gradebook.csvRows(
            client,
            classId,
            columns.map((column) => column.id),
            CSV_CURSOR_BATCH,
          ),
          record: (row: GradebookCsvRow) => [row.displayName, row.studentId, ...row.cells],
        };
      },
    });
  }
}
