import { Injectable, Logger } from '@nestjs/common';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AiProvider, FAILED_PARSE, ParseInput, ParseResult } from './ai-provider';

/** Task parsing as the API offers it: a provider failure is an answer with every field null, never an error. */
@Injectable()
export class AiService {
  private readonly logger = new Logger(AiService.name);

  constructor(private readonly provider: AiProvider) {}

  async parse(input: ParseInput, user: AuthUser): Promise<ParseResult> {
    try {
      return await this.provider.parse(input, { timezone: user.timezone, now: new Date() });
    } catch (error) {
      this.logger.warn({ err: error, userId: user.id }, 'Task parsing failed; answering with empty fields');
      return FAILED_PARSE;
    }
  }

  parseText(text: string, user: AuthUser): Promise<ParseResult> {
    return this.parse({ text, attachments: [] }, user);
  }
}
