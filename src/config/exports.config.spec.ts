import { itRejects } from '../../test/utils/config';
import { exportsConfig } from './exports.config';

describe('exportsConfig', () => {
  it('takes the lowest stall timeout', () => {
    expect(exportsConfig({ EXPORT_STALL_TIMEOUT_MS: '100' }).exports.stallTimeoutMs).toBe(100);
  });

  itRejects(exportsConfig, [
    ['EXPORT_CONCURRENCY', { EXPORT_CONCURRENCY: '0' }],
    ['EXPORT_STALL_TIMEOUT_MS', { EXPORT_STALL_TIMEOUT_MS: '10' }],
  ]);
});
