import type { DigestItem } from '../delivery/deliveries.repository';

const escapeHtml = (value: string): string =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** Where the web client shows an item: its task, or the notification itself when it is about no task. */
export const digestItemLink = (item: Pick<DigestItem, 'id' | 'taskId'>, appUrl: string): string =>
  item.taskId ? `${appUrl}/tasks/${item.taskId}` : `${appUrl}/notifications/${item.id}`;

export interface DigestMail {
  subject: string;
  text: string;
  html: string;
}

/**
 * The digest e-mail: every listed notification in order, with its title, content, time (already written in
 * the recipient's time zone) and link, as plain text and as HTML. `day`: the recipient's local day.
 */
export function digestMail(day: string | null, items: readonly DigestItem[], appUrl: string): DigestMail {
  const count = `${items.length} notification${items.length === 1 ? '' : 's'}`;
  const subject = day ? `Your daily digest for ${day}: ${count}` : `Your daily digest: ${count}`;
  const text = [
    `${subject}.`,
    ...items.map((item, index) =>
      [
        `${index + 1}. ${item.title}`,
        `   ${item.at}`,
        ...item.content.split('\n').map((line) => `   ${line}`),
        `   ${digestItemLink(item, appUrl)}`,
      ].join('\n'),
    ),
  ].join('\n\n');
  const html = [
    `<p>${escapeHtml(subject)}.</p>`,
    '<ol>',
    ...items.map((item) => {
      const link = escapeHtml(digestItemLink(item, appUrl));
      return (
        `<li><p><a href="${link}"><strong>${escapeHtml(item.title)}</strong></a><br>` +
        `<small>${escapeHtml(item.at)}</small></p>` +
        `<p>${escapeHtml(item.content).replace(/\n/g, '<br>')}</p></li>`
      );
    }),
    '</ol>',
  ].join('\n');
  return { subject, text, html };
}
