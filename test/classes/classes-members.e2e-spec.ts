import { createHash, randomUUID } from 'node:crypto';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { apiError as error, ISO_TIMESTAMP as ISO } from '../utils/expect';
import { addMember, ClassWithMembers, createClassWithMembers, duringClassChange } from '../utils/classes';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

const avatarHash = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');

type Actor = 'owner' | 'admin' | 'member' | 'outsider';

describe('class members', () => {
  const ctx = useTestApp();

  /** Roles of a class straight from the database, plus the owner_id the schema ties to the OWNER. */
  async function roles(classId: string): Promise<{ ownerId: string; roles: Record<string, string> }> {
    const members: { user_id: string; role: string }[] = await ctx.db.query(
      `SELECT user_id, role FROM class_members WHERE class_id = $1`,
      [classId],
    );
    const [cls] = await ctx.db.query(`SELECT owner_id FROM classes WHERE id = $1`, [classId]);
    return { ownerId: cls.owner_id, roles: Object.fromEntries(members.map((m) => [m.user_id, m.role])) };
  }

  const setRole = (user: TestUser, classId: string, targetId: string, role: unknown) =>
    ctx.http.patch(`/classes/${classId}/members/${targetId}`).set('Authorization', user.auth).send({ role });
  const removeMember = (user: TestUser, classId: string, targetId: string) =>
    ctx.http.delete(`/classes/${classId}/members/${targetId}`).set('Authorization', user.auth);
  const transfer = (user: TestUser, classId: string, newOwnerId: unknown) =>
    ctx.http.post(`/classes/${classId}/transfer`).set('Authorization', user.auth).send({ newOwnerId });

  describe('GET /classes/:classId/members', () => {
    let f: ClassWithMembers;
    let secondAdmin: TestUser;
    let secondMember: TestUser;
    beforeAll(async () => {
      f = await createClassWithMembers(ctx);
      // Join order differs from role order: the list sorts by role first, then by join time.
      secondMember = await createUser(ctx, { email: '  Second.Member@Example.COM ', nickname: null });
      secondAdmin = await createUser(ctx, { nickname: 'Admin 2' });
      await addMember(ctx, f.cls.id, secondMember);
      await addMember(ctx, f.cls.id, secondAdmin, ClassRole.ADMIN);
    });

    it.each<Actor>(['owner', 'admin', 'member'])(
      'lists OWNER, ADMINs, MEMBERs by join time to the %s',
      async (actor) => {
        const res = await ctx.http
          .get(`/classes/${f.cls.id}/members`)
          .set('Authorization', f[actor].auth)
          .expect(200);
        const entry = (user: TestUser, nickname: string | null, role: string) => ({
          userId: user.id,
          nickname,
          avatarHash: avatarHash(user.email),
          role,
          joinedAt: expect.stringMatching(ISO),
        });
        expect(res.body).toEqual([
          entry(f.owner, 'Owner', 'OWNER'),
          entry(f.admin, 'Admin', 'ADMIN'),
          entry(secondAdmin, 'Admin 2', 'ADMIN'),
          entry(f.member, 'Member', 'MEMBER'),
          entry(secondMember, null, 'MEMBER'),
        ]);
        // The avatar hash is of the trimmed, lower-cased address, and no address appears anywhere.
        expect(res.body[4].avatarHash).toBe(avatarHash('second.member@example.com'));
        const text = JSON.stringify(res.body).toLowerCase();
        for (const user of [f.owner, f.admin, f.member, secondAdmin, secondMember]) {
          expect(text).not.toContain(user.email.trim().toLowerCase());
        }
      },
    );

    it('lists the owner alone in a personal class', async () => {
      const res = await ctx.http
        .get(`/classes/${f.owner.personalClassId}/members`)
        .set('Authorization', f.owner.auth)
        .expect(200);
      expect(res.body).toEqual([expect.objectContaining({ userId: f.owner.id, role: 'OWNER' })]);
    });
  });

  describe('PATCH /classes/:classId/members/:userId', () => {
    it('lets the OWNER promote a MEMBER to ADMIN and demote an ADMIN to MEMBER', async () => {
      const f = await createClassWithMembers(ctx);
      const promoted = await setRole(f.owner, f.cls.id, f.member.id, 'ADMIN').expect(200);
      expect(promoted.body).toEqual({
        userId: f.member.id,
        nickname: 'Member',
        avatarHash: avatarHash(f.member.email),
        role: 'ADMIN',
        joinedAt: expect.stringMatching(ISO),
      });
      const demoted = await setRole(f.owner, f.cls.id, f.admin.id, 'MEMBER').expect(200);
      expect(demoted.body).toMatchObject({ userId: f.admin.id, role: 'MEMBER' });
      expect((await roles(f.cls.id)).roles).toEqual({
        [f.owner.id]: 'OWNER',
        [f.admin.id]: 'MEMBER',
        [f.member.id]: 'ADMIN',
      });
      // The new ADMIN now sees the invite code, the demoted one no longer does.
      const asNewAdmin = await ctx.http
        .get(`/classes/${f.cls.id}`)
        .set('Authorization', f.member.auth)
        .expect(200);
      expect(asNewAdmin.body).toMatchObject({ myRole: 'ADMIN', inviteCode: f.cls.inviteCode });
      const asOldAdmin = await ctx.http
        .get(`/classes/${f.cls.id}`)
        .set('Authorization', f.admin.auth)
        .expect(200);
      expect(asOldAdmin.body).toMatchObject({ myRole: 'MEMBER', inviteCode: null });
    });

    it('keeps a role that is set again (idempotent)', async () => {
      const f = await createClassWithMembers(ctx);
      await setRole(f.owner, f.cls.id, f.admin.id, 'ADMIN').expect(200);
      expect((await roles(f.cls.id)).roles[f.admin.id]).toBe('ADMIN');
    });

    it.each<[Actor, Actor, string]>([
      ['admin', 'member', 'ADMIN'],
      ['admin', 'admin', 'MEMBER'],
      ['member', 'member', 'ADMIN'],
      ['member', 'admin', 'MEMBER'],
      ['outsider', 'member', 'ADMIN'],
    ])('forbids the %s to change the role of the %s (to %s)', async (actor, target, role) => {
      const f = await createClassWithMembers(ctx);
      const before = await roles(f.cls.id);
      const res = await setRole(f[actor], f.cls.id, f[target].id, role);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
      expect(await roles(f.cls.id)).toEqual(before);
    });

    it.each([['OWNER'], ['admin'], ['GUEST'], [null], [1]])(
      'rejects role %p with 400 VALIDATION_ERROR',
      async (role) => {
        const f = await createClassWithMembers(ctx);
        const res = await setRole(f.owner, f.cls.id, f.member.id, role);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
        expect((await roles(f.cls.id)).roles[f.member.id]).toBe('MEMBER');
      },
    );

    it('rejects a body without role and with unknown fields', async () => {
      const f = await createClassWithMembers(ctx);
      for (const body of [{}, { role: 'ADMIN', userId: f.member.id }]) {
        const res = await ctx.http
          .patch(`/classes/${f.cls.id}/members/${f.member.id}`)
          .set('Authorization', f.owner.auth)
          .send(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
    });

    it('answers 404 NOT_FOUND when the target is not a member', async () => {
      const f = await createClassWithMembers(ctx);
      for (const targetId of [f.outsider.id, randomUUID()]) {
        const res = await setRole(f.owner, f.cls.id, targetId, 'ADMIN');
        expect(res.status).toBe(404);
        expect(res.body).toEqual(error('NOT_FOUND'));
      }
    });

    it("answers 400 when the target is the OWNER (the owner's role changes only by transfer)", async () => {
      const f = await createClassWithMembers(ctx);
      for (const role of ['ADMIN', 'MEMBER']) {
        const res = await setRole(f.owner, f.cls.id, f.owner.id, role);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
      expect(await roles(f.cls.id)).toMatchObject({ ownerId: f.owner.id, roles: { [f.owner.id]: 'OWNER' } });
    });

    it('answers 403 on a personal class', async () => {
      const user = await createUser(ctx);
      const res = await setRole(user, user.personalClassId, user.id, 'ADMIN');
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
    });
  });

  describe('DELETE /classes/:classId/members/:userId', () => {
    // Who may remove whom, by class role. `self` means the caller removes itself.
    const allowed: [Actor, Actor | 'self'][] = [
      ['owner', 'admin'],
      ['owner', 'member'],
      ['admin', 'member'],
      ['admin', 'self'],
      ['member', 'self'],
    ];
    const forbidden: [Actor, Actor | 'self'][] = [
      ['owner', 'self'],
      ['admin', 'owner'],
      ['member', 'owner'],
      ['member', 'admin'],
      ['outsider', 'member'],
      ['outsider', 'owner'],
    ];

    it.each(allowed)('lets the %s remove the %s (204)', async (actor, target) => {
      const f = await createClassWithMembers(ctx);
      const targetUser = target === 'self' ? f[actor] : f[target];
      const res = await removeMember(f[actor], f.cls.id, targetUser.id);
      expect(res.status).toBe(204);
      expect(res.body).toEqual({});
      expect((await roles(f.cls.id)).roles[targetUser.id]).toBeUndefined();
      const after = await ctx.http.get(`/classes/${f.cls.id}`).set('Authorization', targetUser.auth);
      expect(after.status).toBe(403);
      const list = await ctx.http.get('/classes').set('Authorization', targetUser.auth).expect(200);
      expect(list.body.map((c: { id: string }) => c.id)).not.toContain(f.cls.id);
    });

    it.each(forbidden)('forbids the %s to remove the %s (403)', async (actor, target) => {
      const f = await createClassWithMembers(ctx);
      const targetUser = target === 'self' ? f[actor] : f[target];
      const before = await roles(f.cls.id);
      const res = await removeMember(f[actor], f.cls.id, targetUser.id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
      expect(await roles(f.cls.id)).toEqual(before);
    });

    it.each<Actor>(['admin', 'member'])(
      'lets the %s leave by their own id written in upper case (ids compare as PostgreSQL does)',
      async (actor) => {
        const f = await createClassWithMembers(ctx);
        await removeMember(f[actor], f.cls.id, f[actor].id.toUpperCase()).expect(204);
        expect((await roles(f.cls.id)).roles[f[actor].id]).toBeUndefined();
      },
    );

    it('forbids an ADMIN to remove another ADMIN', async () => {
      const f = await createClassWithMembers(ctx);
      const otherAdmin = await createUser(ctx);
      await addMember(ctx, f.cls.id, otherAdmin, ClassRole.ADMIN);
      const res = await removeMember(f.admin, f.cls.id, otherAdmin.id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
    });

    it.each<Actor>(['owner', 'admin', 'member'])(
      'answers 404 NOT_FOUND to the %s for a non-member target',
      async (actor) => {
        const f = await createClassWithMembers(ctx);
        for (const targetId of [f.outsider.id, randomUUID()]) {
          const res = await removeMember(f[actor], f.cls.id, targetId);
          expect(res.status).toBe(404);
          expect(res.body).toEqual(error('NOT_FOUND'));
        }
      },
    );

    it('forbids the owner to leave the personal class', async () => {
      const user = await createUser(ctx);
      const res = await removeMember(user, user.personalClassId, user.id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
    });

    it('lets a member who left join again with the invite code', async () => {
      const f = await createClassWithMembers(ctx);
      await removeMember(f.member, f.cls.id, f.member.id).expect(204);
      await ctx.http
        .post('/classes/join')
        .set('Authorization', f.member.auth)
        .send({ inviteCode: f.cls.inviteCode })
        .expect(200);
    });
  });

  describe('POST /classes/:classId/transfer', () => {
    it.each<Actor>(['member', 'admin'])(
      'makes the %s OWNER and the old OWNER ADMIN, atomically',
      async (target) => {
        const f = await createClassWithMembers(ctx);
        const res = await transfer(f.owner, f.cls.id, f[target].id);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          id: f.cls.id,
          name: 'Test class',
          description: null,
          color: '#6366f1',
          isPersonal: false,
          ownerId: f[target].id,
          schoolId: null,
          inviteCode: f.cls.inviteCode,
          myRole: 'ADMIN',
          memberCount: 3,
          createdAt: expect.stringMatching(ISO),
        });
        const after = await roles(f.cls.id);
        expect(after.ownerId).toBe(f[target].id);
        expect(after.roles[f[target].id]).toBe('OWNER');
        expect(after.roles[f.owner.id]).toBe('ADMIN');

        const asNewOwner = await ctx.http
          .get(`/classes/${f.cls.id}`)
          .set('Authorization', f[target].auth)
          .expect(200);
        expect(asNewOwner.body).toMatchObject({ myRole: 'OWNER', ownerId: f[target].id });
        // The old owner lost the OWNER-only rights, the new one has them.
        expect((await transfer(f.owner, f.cls.id, f[target].id)).status).toBe(403);
        expect((await removeMember(f.owner, f.cls.id, f[target].id)).status).toBe(403);
        await removeMember(f.owner, f.cls.id, f.owner.id).expect(204);
      },
    );

    it.each<Actor>(['admin', 'member', 'outsider'])(
      'forbids the %s (403) and changes nothing',
      async (actor) => {
        const f = await createClassWithMembers(ctx);
        const before = await roles(f.cls.id);
        const res = await transfer(f[actor], f.cls.id, f.member.id);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(error('FORBIDDEN'));
        expect(await roles(f.cls.id)).toEqual(before);
      },
    );

    it('answers 400 when the target is not a member, or is the owner already', async () => {
      const f = await createClassWithMembers(ctx);
      for (const target of [f.outsider.id, randomUUID(), f.owner.id, f.owner.id.toUpperCase()]) {
        const res = await transfer(f.owner, f.cls.id, target);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
      expect((await roles(f.cls.id)).ownerId).toBe(f.owner.id);
    });

    it('rejects a malformed or missing newOwnerId with 400', async () => {
      const f = await createClassWithMembers(ctx);
      for (const target of ['abc', undefined, null]) {
        const res = await transfer(f.owner, f.cls.id, target);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
    });

    it('answers 403 on a personal class', async () => {
      const user = await createUser(ctx);
      const res = await transfer(user, user.personalClassId, user.id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
    });

    it('answers 400 and keeps the owner when the target leaves while the transfer waits', async () => {
      const f = await createClassWithMembers(ctx);
      const res = await duringClassChange(
        ctx,
        f.cls.id,
        (db) =>
          db.query(`DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`, [f.cls.id, f.member.id]),
        () => transfer(f.owner, f.cls.id, f.member.id),
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
      expect(await roles(f.cls.id)).toEqual({
        ownerId: f.owner.id,
        roles: { [f.owner.id]: 'OWNER', [f.admin.id]: 'ADMIN' },
      });
    });

    it('answers 403 to a member whose leave waits for a transfer to them', async () => {
      const f = await createClassWithMembers(ctx);
      const res = await duringClassChange(
        ctx,
        f.cls.id,
        async (db) => {
          const setRole = `UPDATE class_members SET role = $3 WHERE class_id = $1 AND user_id = $2`;
          await db.query(setRole, [f.cls.id, f.owner.id, 'ADMIN']);
          await db.query(setRole, [f.cls.id, f.member.id, 'OWNER']);
          await db.query(`UPDATE classes SET owner_id = $2 WHERE id = $1`, [f.cls.id, f.member.id]);
        },
        () => removeMember(f.member, f.cls.id, f.member.id),
      );
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
      expect((await roles(f.cls.id)).roles[f.member.id]).toBe('OWNER');
    });

    it('leaves exactly one OWNER when transfers race', async () => {
      for (let round = 0; round < 4; round++) {
        const f = await createClassWithMembers(ctx);
        const results = await Promise.all([
          transfer(f.owner, f.cls.id, f.admin.id),
          transfer(f.owner, f.cls.id, f.member.id),
          setRole(f.owner, f.cls.id, f.member.id, 'ADMIN'),
        ]);
        const transfers = results.slice(0, 2).map((r) => r.status);
        expect(transfers.sort()).toEqual([200, 403]);
        const [check] = await ctx.db.query(
          `SELECT count(*) FILTER (WHERE m.role = 'OWNER')::int AS owners,
                  bool_and(m.role <> 'OWNER' OR m.user_id = c.owner_id) AS owner_matches
             FROM classes c JOIN class_members m ON m.class_id = c.id
            WHERE c.id = $1
            GROUP BY c.id`,
          [f.cls.id],
        );
        expect(check).toEqual({ owners: 1, owner_matches: true });
        const after = await roles(f.cls.id);
        expect([f.admin.id, f.member.id]).toContain(after.ownerId);
        expect(after.roles[f.owner.id]).toBe('ADMIN');
      }
    });
  });

  describe('schema', () => {
    it('refuses a second OWNER and a class whose owner_id is no OWNER member', async () => {
      const f = await createClassWithMembers(ctx);
      await expect(
        ctx.db.query(`UPDATE class_members SET role = 'OWNER' WHERE class_id = $1 AND user_id = $2`, [
          f.cls.id,
          f.admin.id,
        ]),
      ).rejects.toThrow(/uq_class_members_one_owner/);
      await expect(
        ctx.db.query(`UPDATE class_members SET role = 'ADMIN' WHERE class_id = $1 AND user_id = $2`, [
          f.cls.id,
          f.owner.id,
        ]),
      ).rejects.toThrow(/fk_classes_owner_membership/);
    });
  });
});
