import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { CalendarRepository, FeedEventRow } from './calendar.repository';
import { CalendarFeedDto } from './dto/calendar-feed.response';
import { Component, escapeText, Property, serialize } from './icalendar';

/** Tokens are 32 random bytes in base64url: 43 characters. */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string): Buffer => createHash('sha256').update(token).digest();

/** A rendered feed and its strong ETag (a hash of the body). */
export interface RenderedFeed {
  body: string;
  etag: string;
}

/**
 * The calendar feed: a secret address per user, shown once, and the RFC 5545 calendar of the
 * user's task deadlines behind it, read without a login token.
 */
@Injectable()
export class CalendarFeeds {
  private readonly publicUrl: string;
  private readonly appUrl: string;
  /** UIDs end in `@<host of PUBLIC_URL>`: stable per task and deployment. */
  private readonly uidHost: string;

  constructor(
    @InjectConfig() config: AppConfig,
    private readonly feeds: CalendarRepository,
    private readonly transactions: Transactions,
  ) {
    this.publicUrl = config.publicUrl;
    this.appUrl = config.appUrl;
    this.uidHost = new URL(config.publicUrl).hostname;
  }

  /** A new address; the previous one stops working at once. */
  async enable(userId: string): Promise<CalendarFeedDto> {
    const token = randomBytes(32).toString('base64url');
    await this.transactions.writeOne((db) => this.feeds.setToken(db, userId, hashOf(token)));
    return { url: `${this.publicUrl}/calendar/${token}.ics`, enabled: true };
  }

  /** The address exists only as a hash: it cannot be shown again. */
  async status(userId: string): Promise<CalendarFeedDto> {
    return { url: null, enabled: await this.feeds.isEnabled(userId) };
  }

  disable(userId: string): Promise<void> {
    return this.feeds.remove(userId);
  }

  async render(token: string): Promise<RenderedFeed> {
    const events = TOKEN_FORMAT.test(token) ? await this.feeds.feed(hashOf(token)) : null;
    if (!events) throw AppError.notFound('Calendar feed');
    const body = serialize({
      name: 'VCALENDAR',
      properties: [
        ['VERSION', '2.0'],
        ['PRODID', '-//Classroom Task Service//Calendar feed//EN'],
        ['CALSCALE', 'GREGORIAN'],
        ['X-WR-CALNAME', 'Classroom tasks'],
        // How often clients should fetch again (RFC 7986, and Outlook's older name).
        ['REFRESH-INTERVAL;VALUE=DURATION', 'PT1H'],
        ['X-PUBLISHED-TTL', 'PT1H'],
      ],
      components: events.map((event) => this.event(event)),
    });
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
  }

  /**
   * DTSTAMP is the last change, as RFC 5545 says for a calendar without METHOD; a time of the request would
   * change the body, and so the ETag, on every fetch.
   */
  private event(event: FeedEventRow): Component {
    const link = `${this.appUrl}/tasks/${event.taskId}`;
    const properties: Property[] = [
      ['UID', `${event.taskId}@${this.uidHost}`],
      ['DTSTAMP', event.lastModified],
      // No DTEND: a deadline is an instant, and DTEND must be later than DTSTART. Without DTEND and DURATION
      // the event ends when it starts (RFC 5545 3.6.1).
      ['DTSTART', event.deadline],
      ['SUMMARY', escapeText(event.title)],
      ['DESCRIPTION', escapeText(`Class: ${event.className}\n${link}`)],
      ['URL', link],
      ['LAST-MODIFIED', event.lastModified],
    ];
    if (event.submitted) properties.push(['CATEGORIES', 'SUBMITTED']);
    return { name: 'VEVENT', properties };
  }
}
