import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from './log.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/**
 * Outgoing mail. With an SMTP URL it is sent; otherwise each message is written as an .eml file to the
 * outbox folder of the data directory, where an operator (or a test) can read it.
 */
export class Mailer {
  private readonly transport: Transporter;

  constructor(
    private readonly from: string,
    private readonly outbox: string,
    smtpUrl: string | null,
    private readonly log: Logger,
  ) {
    this.transport = smtpUrl
      ? nodemailer.createTransport(smtpUrl)
      : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    this.smtp = smtpUrl !== null;
  }

  private readonly smtp: boolean;

  async send(mail: Mail): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, ...mail });
    if (this.smtp) return;
    await mkdir(this.outbox, { recursive: true });
    const file = join(this.outbox, `${Date.now()}-${info.messageId.replace(/[^\w.-]/g, '')}.eml`);
    await writeFile(file, (info as unknown as { message: Buffer }).message);
    this.log.info({ to: mail.to, file }, 'mail written to outbox');
  }
}
