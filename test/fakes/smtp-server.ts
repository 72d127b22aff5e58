import { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  /** Envelope recipients, lower-cased. */
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
}

export interface SmtpCapture {
  /** `SMTP_URL` for the service under test. */
  url: string;
  /** Every accepted mail, in arrival order. */
  messages: CapturedMail[];
  /**
   * The oldest mail to `to` not yet returned by an earlier call, waiting for it when needed (each mail is
   * handed out once, so two calls for the same address give two different mails).
   */
  waitFor(to: string, timeoutMs?: number): Promise<CapturedMail>;
  /** Recipients the server refuses (550), to exercise delivery failures. */
  rejectRecipients: Set<string>;
  /** The text of that refusal. */
  rejectionText: string;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (random port) that keeps what it receives. */
export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const handedOut = new Set<CapturedMail>();
  const rejectRecipients = new Set<string>();
  const waiters: (() => void)[] = [];

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (rejectRecipients.has(address.address.toLowerCase())) {
        callback(Object.assign(new Error(capture.rejectionText), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push({
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          });
          waiters.splice(0).forEach((wake) => wake());
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  const take = (to: string): CapturedMail | undefined => {
    const mail = messages.find((message) => !handedOut.has(message) && message.to.includes(to.toLowerCase()));
    if (mail) handedOut.add(mail);
    return mail;
  };

  const capture: SmtpCapture = {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejectRecipients,
    rejectionText: 'Mailbox unavailable',
    async waitFor(to, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = take(to);
        if (mail) return mail;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`No mail to ${to} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return capture;
}
