import { itRejects } from '../../test/utils/config';
import { mailConfig } from './mail.config';

describe('mailConfig', () => {
  it('takes MAIL_FROM as a bare address or as "Name <address>"', () => {
    for (const from of ['tasks@example.org', '"Tasks, Inc." <tasks@example.org>']) {
      expect(mailConfig({ MAIL_FROM: from }).mail.from).toBe(from);
    }
  });

  itRejects(mailConfig, [
    ['SMTP_URL', { SMTP_URL: 'http://mail.example' }],
    ['MAIL_FROM', { MAIL_FROM: 'Classroom Tasks' }],
    ['MAIL_FROM', { MAIL_FROM: 'Classroom Tasks <tasks>' }],
  ]);
});
