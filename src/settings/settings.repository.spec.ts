import { useTestDataSource } from '../../test/utils/test-data-source';
import { SettingsRepository } from './settings.repository';

describe('SettingsRepository (real PostgreSQL)', () => {
  let settings: SettingsRepository;

  useTestDataSource((created) => {
    settings = new SettingsRepository(created);
  });

  it('stores settings as JSON and answers null for one never set', async () => {
    expect(await settings.find('some.key')).toBeNull();
    await settings.save('some.key', { on: true });
    expect(await settings.find('some.key')).toEqual({ key: 'some.key', value: { on: true } });
    expect((await settings.list()).map((row) => row.key)).toContain('some.key');
  });
});
