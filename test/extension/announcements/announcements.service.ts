import { Injectable } from '@nestjs/common';
import { ClassAccess } from '../../../src/access/access.service';
import { AppError } from '../../../src/common/errors/app-error';
import { readKeysetPage } from '../../../src/common/pagination/keyset';
import { Transactions } from '../../../src/database/transactions';
import { toAnnouncement } from './announcements.mapper';
import { AnnouncementsRepository } from './announcements.repository';
import {
  AnnouncementPageResponse,
  AnnouncementResponse,
  CreateAnnouncementDto,
  ListAnnouncementsQuery,
} from './dto/announcement.dto';

/**
 * Announcements of a class. Every member reads them; the OWNER and ADMINs post them (the route's access);
 * the author or an OWNER/ADMIN deletes one.
 */
@Injectable()
export class AnnouncementsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly announcements: AnnouncementsRepository,
  ) {}

  /** Newest first by (createdAt, id), keyset-paginated. */
  async list(access: ClassAccess, query: ListAnnouncementsQuery): Promise<AnnouncementPageResponse> {
    const { page, nextCursor } = await readKeysetPage(query.cursor, query.limit, (after, rows) =>
      this.announcements.page(access.classId, after, rows),
    );
    return { announcements: page.map(toAnnouncement), nextCursor };
  }

  /** The announcement and its ANNOUNCEMENT_POSTED notifications, in one transaction. */
  async post(
    access: ClassAccess,
    authorId: string,
    body: CreateAnnouncementDto,
  ): Promise<AnnouncementResponse> {
    const row = await this.transactions.run(async (tx) => {
      const announcement = await this.announcements.insert(tx, {
        classId: access.classId,
        authorId,
        title: body.title,
        body: body.body,
      });
      await this.announcements.notifyPosted(tx, announcement.id);
      return announcement;
    });
    return toAnnouncement(row);
  }

  /** The author or an OWNER/ADMIN (else 403); an announcement of another class, or none, 404. */
  async remove(access: ClassAccess, callerId: string, announcementId: string): Promise<void> {
    const onlyOwn = access.canManage ? null : callerId;
    if (await this.announcements.delete(access.classId, announcementId, onlyOwn)) return;
    // Nothing deleted: none in this class (or deleted meanwhile), or another member's.
    if ((await this.announcements.authorOf(access.classId, announcementId)) === null) {
      throw AppError.notFound('Announcement');
    }
    throw AppError.forbidden('Only the author or an OWNER/ADMIN may delete an announcement');
  }
}
