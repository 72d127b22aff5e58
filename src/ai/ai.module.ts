import { Module } from '@nestjs/common';
import { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { AiController } from './ai.controller';
import { AiProvider } from './ai-provider';
import { AiService } from './ai.service';
import { LocalAiProvider } from './local/local-ai.provider';
import { OpenAiProvider } from './openai/openai-ai.provider';
import { IdempotencyModule } from '../idempotency/idempotency.module';

@Module({
  imports: [IdempotencyModule],
  controllers: [AiController],
  providers: [
    {
      provide: AiProvider,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): AiProvider =>
        config.ai.provider === 'openai'
          ? new OpenAiProvider(config)
          : new LocalAiProvider(config.ai.localThreads),
    },
    AiService,
  ],
  exports: [AiService],
})
export class AiModule {}
