import { AnnouncementRow } from './announcements.repository';
import { AnnouncementResponse } from './dto/announcement.dto';

export function toAnnouncement(row: AnnouncementRow): AnnouncementResponse {
  return {
    id: row.id,
    classId: row.class_id,
    title: row.title,
    body: row.body,
    author: { id: row.author_id, nickname: row.nickname },
    createdAt: row.created_at,
  };
}
