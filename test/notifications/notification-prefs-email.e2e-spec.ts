import { randomUUID } from 'node:crypto';
import { addMember, createClass } from '../utils/classes';
import { apiError as error, UUID_PATTERN } from '../utils/expect';
import { deliveriesOf, FAST_NOTIFICATIONS, setPref, waitFor } from '../utils/notifications';
import { createTask } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

interface PrefJson {
  id: string;
  channel: string;
  address: string;
  isEnabled: boolean;
  secret?: string;
}

/**
 * The EMAIL preference as the web client's switch needs it: listed before one was saved, as delivery treats
 * a user without one (the account's address, enabled), and DELETE of preferences.
 */
describe('notification preferences: the EMAIL preference before one is saved, and DELETE', () => {
  const ctx = useTestApp(FAST_NOTIFICATIONS);

  const list = async (user: TestUser): Promise<PrefJson[]> =>
    (await ctx.http.get('/users/me/notification-prefs').set('Authorization', user.auth).expect(200)).body;
  const emailPref = async (user: TestUser): Promise<PrefJson> =>
    (await list(user)).find((pref) => pref.channel === 'EMAIL')!;
  const remove = (user: TestUser | null, id: string) => {
    const req = ctx.http.delete(`/users/me/notification-prefs/${id}`);
    return user ? req.set('Authorization', user.auth) : req;
  };

  /** Publishes a task to `member` and answers the channels and addresses its notification was routed to. */
  async function routedTo(member: TestUser): Promise<string[]> {
    const owner = await createUser(ctx);
    const { id: classId } = await createClass(ctx, owner);
    await addMember(ctx, classId, member);
    const before = (await deliveriesOf(ctx, member)).length;
    const task = await createTask(ctx, classId, owner);
    await waitFor('the notification to be routed', async () => {
      const [row] = await ctx.db.query(
        `SELECT status FROM notifications WHERE task_id = $1 AND user_id = $2`,
        [task.id, member.id],
      );
      return row?.status === 'SENT';
    });
    return (await deliveriesOf(ctx, member)).slice(before).map((row) => `${row.channel} ${row.address}`);
  }

  it('lists EMAIL to the account address, enabled, under an id that stays the same and is the user’s own', async () => {
    const user = await createUser(ctx);
    const other = await createUser(ctx);
    const first = await list(user);
    expect(first).toEqual([
      { id: expect.stringMatching(UUID_PATTERN), channel: 'EMAIL', address: user.email, isEnabled: true },
    ]);
    expect(await list(user)).toEqual(first);
    expect((await emailPref(other)).id).not.toBe(first[0].id);
  });

  it('agrees with delivery: unsaved, e-mail goes to the account address; paused, no e-mail; deleted, again', async () => {
    const user = await createUser(ctx);
    expect(await routedTo(user)).toEqual([`EMAIL ${user.email}`]);

    const unsaved = await emailPref(user);
    const paused = await setPref(ctx, user, { channel: 'EMAIL', address: user.email, isEnabled: false });
    expect(paused).toEqual({ ...unsaved, isEnabled: false });
    expect(await list(user)).toEqual([paused]);
    expect(await routedTo(user)).toEqual([]);

    await remove(user, paused.id).expect(204);
    expect(await list(user)).toEqual([unsaved]);
    expect(await routedTo(user)).toEqual([`EMAIL ${user.email}`]);
  });

  it('keeps the listed id when a PUT saves the EMAIL preference, and on later PUTs', async () => {
    const user = await createUser(ctx);
    const unsaved = await emailPref(user);
    const saved = await setPref(ctx, user, { channel: 'EMAIL', address: 'Other@Example.com' });
    expect(saved).toEqual({
      id: unsaved.id,
      channel: 'EMAIL',
      address: 'other@example.com',
      isEnabled: true,
    });
    const again = await setPref(ctx, user, {
      channel: 'EMAIL',
      address: 'third@example.com',
      isEnabled: false,
    });
    expect(again.id).toBe(unsaved.id);
    expect(await routedTo(user)).toEqual([]);
    await setPref(ctx, user, { channel: 'EMAIL', address: 'third@example.com' });
    expect(await routedTo(user)).toEqual(['EMAIL third@example.com']);
  });

  it('follows the account address while nothing is saved (after an e-mail change)', async () => {
    const user = await createUser(ctx);
    const moved = `moved-${randomUUID()}@example.com`;
    await ctx.db.query(`UPDATE users SET email = $2 WHERE id = $1`, [user.id, moved]);
    expect(await emailPref(user)).toMatchObject({ address: moved, isEnabled: true });
  });

  it('lists the unsaved EMAIL first, before saved WEBHOOK and MESSENGER preferences', async () => {
    const user = await createUser(ctx);
    const messenger = await setPref(ctx, user, { channel: 'MESSENGER', address: '@class_chat' });
    const hook = await setPref(ctx, user, { channel: 'WEBHOOK', address: 'https://hooks.example.com/x' });
    expect((await list(user)).map((pref) => [pref.channel, pref.id])).toEqual([
      ['EMAIL', expect.stringMatching(UUID_PATTERN)],
      ['WEBHOOK', hook.id],
      ['MESSENGER', messenger.id],
    ]);
  });

  it('sends a test event through the unsaved EMAIL preference to the account address', async () => {
    const user = await createUser(ctx);
    const res = await ctx.http
      .post('/users/me/notification-prefs/EMAIL/test')
      .set('Authorization', user.auth);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ channel: 'EMAIL', address: user.email, type: 'TEST' });
    const missing = await ctx.http
      .post('/users/me/notification-prefs/WEBHOOK/test')
      .set('Authorization', user.auth);
    expect([missing.status, missing.body]).toEqual([404, error('NOT_FOUND')]);
  });

  describe('DELETE /users/me/notification-prefs/:prefId', () => {
    it('deletes a WEBHOOK or MESSENGER preference (204); it is gone from the list and from delivery', async () => {
      const user = await createUser(ctx);
      const hook = await setPref(ctx, user, { channel: 'WEBHOOK', address: 'https://hooks.example.com/y' });
      const messenger = await setPref(ctx, user, { channel: 'MESSENGER', address: '-100123' });
      await remove(user, hook.id).expect(204);
      await remove(user, messenger.id.toUpperCase()).expect(204);
      expect((await list(user)).map((pref) => pref.channel)).toEqual(['EMAIL']);
      expect(await routedTo(user)).toEqual([`EMAIL ${user.email}`]);
      const again = await remove(user, hook.id);
      expect([again.status, again.body]).toEqual([404, error('NOT_FOUND')]);
    });

    it('answers 204 for the id of the unsaved EMAIL preference, and changes nothing', async () => {
      const user = await createUser(ctx);
      const unsaved = await emailPref(user);
      await remove(user, unsaved.id).expect(204);
      expect(await list(user)).toEqual([unsaved]);
    });

    it("answers 404 for another user's preference and for an unknown id, keeping theirs", async () => {
      const owner = await createUser(ctx);
      const intruder = await createUser(ctx);
      const hook = await setPref(ctx, owner, { channel: 'WEBHOOK', address: 'https://hooks.example.com/z' });
      const saved = await setPref(ctx, owner, { channel: 'EMAIL', address: 'saved@example.com' });
      for (const id of [hook.id, saved.id, randomUUID()]) {
        const res = await remove(intruder, id);
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
      expect(await list(owner)).toEqual([saved, hook]);
    });

    it('answers 400 for a malformed id and 401 without a token', async () => {
      const user = await createUser(ctx);
      const malformed = await remove(user, 'EMAIL');
      expect([malformed.status, malformed.body]).toEqual([400, error('VALIDATION_ERROR')]);
      const anonymous = await remove(null, randomUUID());
      expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
    });
  });
});
