import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { KeysetPlace, keysetAfterSql, keysetPositionSql } from '../../../src/common/pagination/keyset';
import { isoSql } from '../../../src/common/utils/time';
import { affected, Db, one, rows } from '../../../src/database/sql';
import { compileFanOut } from '../../../src/notifications/production/notification-fan-out';
import { defineNotificationType } from '../../../src/notifications/production/notification-types';
import { Notifier } from '../../../src/notifications/production/notifier';

export interface AnnouncementRow {
  id: string;
  class_id: string;
  author_id: string;
  nickname: string | null;
  title: string;
  body: string;
  created_at: string;
  /** The place in the list (see keysetPositionSql). */
  position: string;
}

/** Alias `a` = announcements, `w` = its author. */
const ANNOUNCEMENT_COLUMNS = `a.id, a.class_id, a.author_id, w.nickname, a.title, a.body,
  ${isoSql('a.created_at')} AS created_at, ${keysetPositionSql('a.created_at')} AS position`;

/** Longest part of an announcement's body quoted in its notification's text. */
const BODY_EXCERPT_LENGTH = 200;

/**
 * An announcement in a class, about the announcement itself (`entity`): one per announcement and recipient,
 * however often it is produced. The text quotes the body, white space folded, cut at BODY_EXCERPT_LENGTH.
 * Deleting the announcement before a channel sends it leaves that delivery unsent; the inbox item stays.
 */
export const ANNOUNCEMENT_POSTED = defineNotificationType({
  name: 'ANNOUNCEMENT_POSTED',
  subject: 'entity',
  texts: ({ title, author, excerpt }: Record<'title' | 'author' | 'excerpt', string>) => ({
    title: `format('Announcement in %s: %s', c.name, ${title})`,
    content: `format('%s announced in %s: %s', ${author}, c.name,
                     CASE WHEN length(${excerpt}) > ${BODY_EXCERPT_LENGTH}
                          THEN left(${excerpt}, ${BODY_EXCERPT_LENGTH - 1}) || '…' ELSE ${excerpt} END)`,
  }),
  staleWhen: [
    {
      when: 'NOT EXISTS (SELECT 1 FROM announcements a WHERE a.id = n.subject_id)',
      reason: 'not sent: the announcement was deleted',
    },
  ],
});

/**
 * ANNOUNCEMENT_POSTED for announcement `$1`: to every member of its class but its author. The webhook `data`
 * adds the announcement's id and title.
 */
const POSTED = compileFanOut({
  type: ANNOUNCEMENT_POSTED,
  from: `announcements a
    CROSS JOIN LATERAL (
      SELECT coalesce(w.nickname, 'A class manager') AS name FROM users w WHERE w.id = a.author_id
    ) author
    CROSS JOIN LATERAL (SELECT regexp_replace(a.body, '[[:space:]]+', ' ', 'g') AS text) excerpt`,
  subject: { class: 'a.class_id', entity: 'a.id' },
  recipients: { roles: 'all' },
  actor: 'a.author_id',
  where: 'a.id = $1',
  vars: { title: 'a.title', author: 'author.name', excerpt: 'excerpt.text' },
  data: `jsonb_build_object('announcementId', a.id, 'title', a.title)`,
});

/** The announcements of classes (table `announcements`). */
@Injectable()
export class AnnouncementsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifier: Notifier,
  ) {}

  /** ANNOUNCEMENT_POSTED of the announcement just written, in its transaction `db` (see POSTED). */
  async notifyPosted(db: Db, announcementId: string): Promise<number> {
    return (await this.notifier.produce(db, POSTED, [announcementId])).notifications;
  }

  /** `limit` announcements of the class, newest first by (created_at, id), after `after` when given. */
  page(classId: string, after: KeysetPlace | null, limit: number): Promise<AnnouncementRow[]> {
    return rows<AnnouncementRow>(
      this.dataSource,
      `SELECT ${ANNOUNCEMENT_COLUMNS}
         FROM announcements a JOIN users w ON w.id = a.author_id
        WHERE a.class_id = $1
              ${after ? `AND ${keysetAfterSql('a.created_at', 'a.id', 'desc', { micros: 3, id: 4 })}` : ''}
        ORDER BY a.created_at DESC, a.id DESC
        LIMIT $2`,
      after ? [classId, limit, after.micros, after.id] : [classId, limit],
    );
  }

  /** Writes the announcement; its notifications are produced in the same transaction (`notifyPosted`). */
  async insert(
    db: Db,
    announcement: { classId: string; authorId: string; title: string; body: string },
  ): Promise<AnnouncementRow> {
    const row = await one<AnnouncementRow>(
      db,
      `WITH a AS (
         INSERT INTO announcements (class_id, author_id, title, body) VALUES ($1, $2, $3, $4) RETURNING *)
       SELECT ${ANNOUNCEMENT_COLUMNS} FROM a JOIN users w ON w.id = a.author_id`,
      [announcement.classId, announcement.authorId, announcement.title, announcement.body],
    );
    return row!;
  }

  /**
   * Deletes the announcement of the class, only when `authorId` wrote it unless that is null; false when
   * nothing was deleted (see `authorOf` for why).
   */
  async delete(classId: string, announcementId: string, authorId: string | null): Promise<boolean> {
    const deleted = await affected(
      this.dataSource,
      `DELETE FROM announcements WHERE id = $1 AND class_id = $2 AND ($3::uuid IS NULL OR author_id = $3)`,
      [announcementId, classId, authorId],
    );
    return deleted > 0;
  }

  /** The author of the class's announcement; null when the class has no such announcement. */
  async authorOf(classId: string, announcementId: string): Promise<string | null> {
    const row = await one<{ author_id: string }>(
      this.dataSource,
      `SELECT author_id FROM announcements WHERE id = $1 AND class_id = $2`,
      [announcementId, classId],
    );
    return row?.author_id ?? null;
  }
}
