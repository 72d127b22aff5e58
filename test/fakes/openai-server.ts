import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** What the fake answers to the next chat-completions call. */
export type ChatReply =
  /** A completion whose message content is this value as JSON (what a well-behaved model sends). */
  | { kind: 'json'; value: unknown }
  /** A completion whose message content is this string verbatim. */
  | { kind: 'content'; content: string }
  /** This HTTP status with an OpenAI-style error body. */
  | { kind: 'status'; status: number }
  /** 200 with a body that is not JSON at all. */
  | { kind: 'garbage' }
  /** Never answers (until the server closes): the service must time out. */
  | { kind: 'hang' };

export interface ChatRequest {
  authorization: string | undefined;
  body: {
    model?: string;
    response_format?: unknown;
    messages?: { role: string; content: string }[];
  };
}

export interface FakeOpenAi {
  /** `AI_BASE_URL` for the service under test. */
  baseUrl: string;
  requests: ChatRequest[];
  /** Queues the answers to the next calls, in order; with none queued the fake answers 500. */
  reply(...replies: ChatReply[]): void;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<ChatRequest['body']> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'];
}

function completion(content: string): object {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
}

/** A real HTTP server on 127.0.0.1 (random port) speaking `POST /v1/chat/completions`. */
export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: ChatRequest[] = [];
  const queue: ChatReply[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404).end();
      return;
    }
    void readJson(request).then((body) => {
      requests.push({ authorization: request.headers.authorization, body });
      const reply = queue.shift() ?? { kind: 'status', status: 500 };
      const json = (status: number, payload: unknown): void => {
        response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(payload));
      };
      switch (reply.kind) {
        case 'json':
          return json(200, completion(JSON.stringify(reply.value)));
        case 'content':
          return json(200, completion(reply.content));
        case 'status':
          return json(reply.status, { error: { message: 'fake failure', type: 'server_error' } });
        case 'garbage':
          return response.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>Bad gateway</html>');
        case 'hang':
          hanging.add(response);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
