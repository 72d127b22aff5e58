import { ApiProperty } from '@nestjs/swagger';

export class TimeOptionResponse {
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  startAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  dueAt: string | null;
}

/** Suggested task fields; every field is null when the model failed or answered something malformed. */
export class ParseResultResponse {
  @ApiProperty({ type: String, nullable: true })
  title: string | null;

  @ApiProperty({
    type: [TimeOptionResponse],
    nullable: true,
    minItems: 1,
    maxItems: 3,
    description: 'Most likely reading first; several when the text is ambiguous',
  })
  timeOptions: TimeOptionResponse[] | null;

  @ApiProperty({ type: Boolean, nullable: true, description: 'Null when the text does not say' })
  allowLateSubmission: boolean | null;

  @ApiProperty({ type: String, nullable: true, description: 'Markdown' })
  description: string | null;
}

export class DraftParseResultResponse extends ParseResultResponse {
  @ApiProperty({
    description: 'True when a Markdown draft is cached and GET /tasks/:taskId/draft-markdown returns it',
  })
  markdownCached: boolean;
}
