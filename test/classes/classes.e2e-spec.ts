import crypto, { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { generateInviteCode, INVITE_CODE_ALPHABET } from '../../src/classes/invite-code';
import { apiError as error, ISO_TIMESTAMP as ISO } from '../utils/expect';
import {
  addMember,
  ClassWithMembers,
  createClass,
  createClassWithMembers,
  duringClassChange,
} from '../utils/classes';
import { attachQueryCounter } from '../utils/query-counter';
import { useTestApp } from '../utils/test-app';
import { createSchool, createUser, TestUser } from '../utils/users';

const INVITE_CODE = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{10}$/;

type Actor = 'owner' | 'admin' | 'member' | 'outsider';

describe('classes', () => {
  const ctx = useTestApp();

  const post = (user: TestUser, path: string, body: object) =>
    ctx.http.post(path).set('Authorization', user.auth).send(body);

  /** The ADMIN of `f` loses the role meanwhile: removed from the class, or made a MEMBER. */
  const adminLoss = (f: ClassWithMembers, how: 'removed' | 'demoted') => (db: QueryRunner) =>
    db.query(
      how === 'removed'
        ? `DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`
        : `UPDATE class_members SET role = 'MEMBER' WHERE class_id = $1 AND user_id = $2`,
      [f.cls.id, f.admin.id],
    );

  describe('every :classId route', () => {
    // Rows all have three entries: jest passes a `done` callback to a test taking more arguments than its row.
    const routes: [string, string, object | undefined][] = [
      ['get', '', undefined],
      ['patch', '', { name: 'x' }],
      ['delete', '', undefined],
      ['get', '/members', undefined],
      ['patch', '/members/:userId', { role: 'ADMIN' }],
      ['delete', '/members/:userId', undefined],
      ['post', '/transfer', { newOwnerId: randomUUID() }],
      ['post', '/invite-code', undefined],
    ];
    let f: ClassWithMembers;
    beforeAll(async () => {
      f = await createClassWithMembers(ctx);
    });
    const path = (classId: string, suffix: string) =>
      `/classes/${classId}${suffix.replace(':userId', f.member.id)}`;
    const send = (method: string, url: string, body?: object, auth?: string) => {
      const req = (ctx.http as unknown as Record<string, (u: string) => import('supertest').Test>)[method](
        url,
      );
      if (auth) req.set('Authorization', auth);
      return body ? req.send(body) : req;
    };

    it.each(routes)('%s %s without a token → 401 UNAUTHORIZED', async (method, suffix, body) => {
      const res = await send(method, path(f.cls.id, suffix), body);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(error('UNAUTHORIZED'));
    });

    it.each(routes)('%s %s with an invalid token → 401 UNAUTHORIZED', async (method, suffix, body) => {
      const res = await send(method, path(f.cls.id, suffix), body, 'Bearer not-a-jwt');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(error('UNAUTHORIZED'));
    });

    it.each(routes)('%s %s by a non-member → 403 FORBIDDEN', async (method, suffix, body) => {
      const res = await send(method, path(f.cls.id, suffix), body, f.outsider.auth);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
    });

    it.each(routes)('%s %s of a missing class → 404 NOT_FOUND', async (method, suffix, body) => {
      const res = await send(method, path(randomUUID(), suffix), body, f.owner.auth);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(error('NOT_FOUND'));
    });

    it.each(routes)('%s %s with a malformed classId → 400 VALIDATION_ERROR', async (method, suffix, body) => {
      const res = await send(method, path('not-a-uuid', suffix), body, f.owner.auth);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
    });

    it.each(routes.filter(([, suffix]) => suffix.includes(':userId')))(
      '%s %s with a malformed userId → 400 VALIDATION_ERROR',
      async (method, suffix, body) => {
        const url = `/classes/${f.cls.id}${suffix.replace(':userId', '123')}`;
        const res = await send(method, url, body, f.owner.auth);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      },
    );

    it('GET /classes and POST /classes, /classes/join without a token → 401', async () => {
      for (const res of [
        await ctx.http.get('/classes'),
        await ctx.http.post('/classes').send({ name: 'x' }),
        await ctx.http.post('/classes/join').send({ inviteCode: f.cls.inviteCode }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(error('UNAUTHORIZED'));
      }
    });
  });

  describe('POST /classes', () => {
    it('creates a shared class with the caller as OWNER and a fresh invite code', async () => {
      const user = await createUser(ctx);
      const res = await post(user, '/classes', { name: 'Algebra' }).expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        name: 'Algebra',
        description: null,
        color: '#6366f1',
        isPersonal: false,
        ownerId: user.id,
        schoolId: null,
        inviteCode: expect.stringMatching(INVITE_CODE),
        myRole: 'OWNER',
        memberCount: 1,
        createdAt: expect.stringMatching(ISO),
      });
      const rows = await ctx.db.query(
        `SELECT m.user_id, m.role, c.owner_id, c.invite_code
           FROM classes c JOIN class_members m ON m.class_id = c.id WHERE c.id = $1`,
        [res.body.id],
      );
      expect(rows).toEqual([
        { user_id: user.id, role: 'OWNER', owner_id: user.id, invite_code: res.body.inviteCode },
      ]);
    });

    it('takes description, color (stored lower-case), a known school, and trims the name', async () => {
      const user = await createUser(ctx);
      const schoolId = (await createSchool(ctx)).id;
      const res = await post(user, '/classes', {
        name: '  Physics  ',
        description: 'Mechanics',
        color: '#AABBCC',
        schoolId,
      }).expect(201);
      expect(res.body).toMatchObject({
        name: 'Physics',
        description: 'Mechanics',
        color: '#aabbcc',
        schoolId,
      });
    });

    it('accepts the limits: name of 100, description of 2000, null description and schoolId', async () => {
      const user = await createUser(ctx);
      const res = await post(user, '/classes', {
        name: 'n'.repeat(100),
        description: 'd'.repeat(2000),
      }).expect(201);
      expect(res.body.name).toHaveLength(100);
      await post(user, '/classes', { name: 'x', description: null, schoolId: null }).expect(201);
    });

    it('gives every class its own invite code', async () => {
      const user = await createUser(ctx);
      const codes = new Set<string>();
      for (let i = 0; i < 5; i++)
        codes.add((await post(user, '/classes', { name: `c${i}` }).expect(201)).body.inviteCode);
      expect(codes.size).toBe(5);
    });

    it.each([
      ['missing name', {}],
      ['empty name', { name: '' }],
      ['blank name', { name: '   ' }],
      ['name over 100', { name: 'n'.repeat(101) }],
      ['name not a string', { name: 42 }],
      ['description over 2000', { name: 'x', description: 'd'.repeat(2001) }],
      ['color not hex', { name: 'x', color: 'red' }],
      ['color short', { name: 'x', color: '#abc' }],
      ['color null', { name: 'x', color: null }],
      ['malformed schoolId', { name: 'x', schoolId: 'abc' }],
      ['unknown field', { name: 'x', isPersonal: true }],
    ])('rejects %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const user = await createUser(ctx);
      const res = await post(user, '/classes', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
    });

    it('rejects an unknown school with 400 and creates nothing', async () => {
      const user = await createUser(ctx);
      const res = await post(user, '/classes', { name: 'x', schoolId: randomUUID() });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
      const [{ count }] = await ctx.db.query(
        `SELECT count(*)::int AS count FROM classes WHERE owner_id = $1`,
        [user.id],
      );
      expect(count).toBe(1);
    });
  });

  describe('GET /classes', () => {
    it('lists the personal class of a new user', async () => {
      const user = await createUser(ctx);
      const res = await ctx.http.get('/classes').set('Authorization', user.auth).expect(200);
      expect(res.body).toEqual([
        {
          id: user.personalClassId,
          name: 'Personal',
          description: null,
          color: '#6366f1',
          isPersonal: true,
          ownerId: user.id,
          schoolId: null,
          inviteCode: null,
          myRole: 'OWNER',
          memberCount: 1,
          createdAt: expect.stringMatching(ISO),
        },
      ]);
    });

    it('lists personal first, then by creation, with role, count and invite code per role', async () => {
      const [me, other, third] = await Promise.all([createUser(ctx), createUser(ctx), createUser(ctx)]);
      const owned = (await post(me, '/classes', { name: 'Owned' }).expect(201)).body;
      const adminOf = (await post(other, '/classes', { name: 'AdminOf' }).expect(201)).body;
      const memberOf = (await post(other, '/classes', { name: 'MemberOf' }).expect(201)).body;
      await addMember(ctx, adminOf.id, me, ClassRole.ADMIN);
      await addMember(ctx, adminOf.id, third);
      await post(me, '/classes/join', { inviteCode: memberOf.inviteCode }).expect(200);
      await post(third, '/classes', { name: 'NotMine' }).expect(201);

      const res = await ctx.http.get('/classes').set('Authorization', me.auth).expect(200);
      expect(res.body.map((c: { name: string }) => c.name)).toEqual([
        'Personal',
        'Owned',
        'AdminOf',
        'MemberOf',
      ]);
      const [, ownedRow, adminRow, memberRow] = res.body;
      expect(ownedRow).toEqual({ ...owned, memberCount: 1 });
      expect(adminRow).toEqual({ ...adminOf, myRole: 'ADMIN', memberCount: 3 });
      expect(memberRow).toEqual({ ...memberOf, myRole: 'MEMBER', inviteCode: null, memberCount: 2 });
    });

    it('issues the same number of SQL statements for 2 and for 30 classes', async () => {
      const counter = attachQueryCounter(ctx);
      try {
        const [few, many, other] = await Promise.all([createUser(ctx), createUser(ctx), createUser(ctx)]);
        await createClass(ctx, few);
        for (let i = 0; i < 29; i++) {
          const cls = await createClass(ctx, other, { name: `c${i}` });
          await addMember(ctx, cls.id, many);
          await addMember(ctx, cls.id, few);
        }
        const list = (user: TestUser) => ctx.http.get('/classes').set('Authorization', user.auth).expect(200);
        let fewCount = 0;
        const fewStatements = await counter.record(async () => (fewCount = (await list(few)).body.length));
        let manyCount = 0;
        const manyStatements = await counter.record(async () => (manyCount = (await list(many)).body.length));
        expect([fewCount, manyCount]).toEqual([31, 30]);
        // Authentication, then the one list statement.
        expect(fewStatements.length).toBeGreaterThanOrEqual(2);
        expect(manyStatements).toEqual(fewStatements);
      } finally {
        counter.detach();
      }
    });
  });

  describe('GET /classes/:classId', () => {
    let f: ClassWithMembers;
    beforeAll(async () => {
      f = await createClassWithMembers(ctx, { name: 'Chemistry', description: 'Labs' });
    });

    it.each<[Actor, string, boolean]>([
      ['owner', 'OWNER', true],
      ['admin', 'ADMIN', true],
      ['member', 'MEMBER', false],
    ])('answers the %s with role %s (invite code shown: %s)', async (actor, role, showsCode) => {
      const res = await ctx.http.get(`/classes/${f.cls.id}`).set('Authorization', f[actor].auth).expect(200);
      expect(res.body).toEqual({
        id: f.cls.id,
        name: 'Chemistry',
        description: 'Labs',
        color: '#6366f1',
        isPersonal: false,
        ownerId: f.owner.id,
        schoolId: null,
        inviteCode: showsCode ? f.cls.inviteCode : null,
        myRole: role,
        memberCount: 3,
        createdAt: expect.stringMatching(ISO),
      });
    });

    it('shows a personal class to its owner without invite code, and to nobody else', async () => {
      const res = await ctx.http
        .get(`/classes/${f.owner.personalClassId}`)
        .set('Authorization', f.owner.auth)
        .expect(200);
      expect(res.body).toMatchObject({ isPersonal: true, inviteCode: null, myRole: 'OWNER', memberCount: 1 });
      const other = await ctx.http
        .get(`/classes/${f.owner.personalClassId}`)
        .set('Authorization', f.member.auth);
      expect(other.status).toBe(403);
      expect(other.body).toEqual(error('FORBIDDEN'));
    });
  });

  describe('PATCH /classes/:classId', () => {
    const patch = (user: TestUser, classId: string, body: object) =>
      ctx.http.patch(`/classes/${classId}`).set('Authorization', user.auth).send(body);

    it.each<Actor>(['owner', 'admin'])('lets the %s change name, description and color', async (actor) => {
      const f = await createClassWithMembers(ctx, { description: 'old' });
      const res = await patch(f[actor], f.cls.id, {
        name: ' Renamed ',
        description: 'new',
        color: '#0F0F0F',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: f.cls.id,
        name: 'Renamed',
        description: 'new',
        color: '#0f0f0f',
        isPersonal: false,
        ownerId: f.owner.id,
        schoolId: null,
        inviteCode: f.cls.inviteCode,
        myRole: actor.toUpperCase(),
        memberCount: 3,
        createdAt: expect.stringMatching(ISO),
      });
    });

    it('forbids a MEMBER and changes nothing', async () => {
      const f = await createClassWithMembers(ctx, { name: 'Keep' });
      const res = await patch(f.member, f.cls.id, { name: 'Hacked' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
      const [row] = await ctx.db.query(`SELECT name FROM classes WHERE id = $1`, [f.cls.id]);
      expect(row.name).toBe('Keep');
    });

    it.each(['removed', 'demoted'] as const)(
      'answers 403 and changes nothing when the ADMIN is %s while the change waits',
      async (how) => {
        const f = await createClassWithMembers(ctx, { name: 'Keep' });
        const res = await duringClassChange(ctx, f.cls.id, adminLoss(f, how), () =>
          patch(f.admin, f.cls.id, { name: 'Renamed' }),
        );
        expect(res.status).toBe(403);
        expect(res.body).toEqual(error('FORBIDDEN'));
        const [row] = await ctx.db.query(`SELECT name FROM classes WHERE id = $1`, [f.cls.id]);
        expect(row.name).toBe('Keep');
      },
    );

    it('clears the description with null and leaves omitted fields alone', async () => {
      const f = await createClassWithMembers(ctx, { name: 'Keep', description: 'text', color: '#123456' });
      const res = await patch(f.owner, f.cls.id, { description: null }).expect(200);
      expect(res.body).toMatchObject({ name: 'Keep', description: null, color: '#123456' });
      const unchanged = await patch(f.owner, f.cls.id, {}).expect(200);
      expect(unchanged.body).toEqual(res.body);
    });

    it.each([
      ['null name', { name: null }],
      ['empty name', { name: '' }],
      ['name over 100', { name: 'n'.repeat(101) }],
      ['null color', { color: null }],
      ['bad color', { color: '#12345g' }],
      ['description over 2000', { description: 'd'.repeat(2001) }],
      ['schoolId (not changeable)', { schoolId: randomUUID() }],
      ['unknown field', { ownerId: randomUUID() }],
    ])('rejects %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const f = await createClassWithMembers(ctx);
      const res = await patch(f.owner, f.cls.id, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
    });

    it('lets the owner rename and recolor the personal class', async () => {
      const user = await createUser(ctx);
      const res = await patch(user, user.personalClassId, { name: 'My stuff', color: '#ff0000' }).expect(200);
      expect(res.body).toMatchObject({
        name: 'My stuff',
        color: '#ff0000',
        isPersonal: true,
        inviteCode: null,
      });
    });
  });

  describe('POST /classes/join', () => {
    it('joins as MEMBER by a trimmed, lower-cased code and answers the summary', async () => {
      const f = await createClassWithMembers(ctx);
      const res = await post(f.outsider, '/classes/join', {
        inviteCode: `  ${f.cls.inviteCode.toLowerCase()} `,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: f.cls.id,
        name: 'Test class',
        description: null,
        color: '#6366f1',
        isPersonal: false,
        ownerId: f.owner.id,
        schoolId: null,
        inviteCode: null,
        myRole: 'MEMBER',
        memberCount: 4,
        createdAt: expect.stringMatching(ISO),
      });
      await ctx.http.get(`/classes/${f.cls.id}`).set('Authorization', f.outsider.auth).expect(200);
    });

    it.each<Actor>(['owner', 'admin', 'member'])(
      'answers 409 CONFLICT when the %s joins again',
      async (actor) => {
        const f = await createClassWithMembers(ctx);
        const res = await post(f[actor], '/classes/join', { inviteCode: f.cls.inviteCode });
        expect(res.status).toBe(409);
        expect(res.body).toEqual(error('CONFLICT'));
      },
    );

    it('answers 404 NOT_FOUND for an unknown code', async () => {
      const user = await createUser(ctx);
      const res = await post(user, '/classes/join', { inviteCode: 'ZZZZZZZZZZ' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(error('NOT_FOUND'));
    });

    it.each([
      ['missing code', {}],
      ['empty code', { inviteCode: '' }],
      ['blank code', { inviteCode: ' \t ' }],
      ['code not a string', { inviteCode: 1234567890 }],
      ['unknown field', { inviteCode: 'ABCDEFGHJK', role: 'ADMIN' }],
    ])('rejects %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const user = await createUser(ctx);
      const res = await post(user, '/classes/join', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
    });

    it('answers one 200 and otherwise 409 when the same user joins several times at once', async () => {
      const f = await createClassWithMembers(ctx);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => post(f.outsider, '/classes/join', { inviteCode: f.cls.inviteCode })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body).toEqual(error('CONFLICT'));
      const [{ count }] = await ctx.db.query(
        `SELECT count(*)::int AS count FROM class_members WHERE class_id = $1 AND user_id = $2`,
        [f.cls.id, f.outsider.id],
      );
      expect(count).toBe(1);
    });

    it.each([
      [
        'replaced',
        (f: ClassWithMembers) => (db: QueryRunner) =>
          db.query(`UPDATE classes SET invite_code = $2 WHERE id = $1`, [f.cls.id, generateInviteCode()]),
      ],
      [
        'deleted',
        (f: ClassWithMembers) => (db: QueryRunner) =>
          db.query(`DELETE FROM classes WHERE id = $1`, [f.cls.id]),
      ],
    ])(
      'answers 404 and adds nobody when the class or code is %s while the join waits',
      async (_how, change) => {
        const f = await createClassWithMembers(ctx);
        const res = await duringClassChange(ctx, f.cls.id, change(f), () =>
          post(f.outsider, '/classes/join', { inviteCode: f.cls.inviteCode }),
        );
        expect(res.status).toBe(404);
        expect(res.body).toEqual(error('NOT_FOUND'));
        const rows = await ctx.db.query(`SELECT 1 FROM class_members WHERE user_id = $1 AND class_id = $2`, [
          f.outsider.id,
          f.cls.id,
        ]);
        expect(rows).toEqual([]);
      },
    );

    describe('school-restricted class', () => {
      let schoolId: string;
      let f: ClassWithMembers;
      beforeAll(async () => {
        schoolId = (await createSchool(ctx)).id;
        f = await createClassWithMembers(ctx, { schoolId });
      });

      it('admits a user of that school', async () => {
        const student = await createUser(ctx, { schoolId, studentId: 's-1' });
        const res = await post(student, '/classes/join', { inviteCode: f.cls.inviteCode }).expect(200);
        expect(res.body).toMatchObject({ schoolId, myRole: 'MEMBER' });
      });

      it('refuses a user of another school and a user without school with 403 FORBIDDEN', async () => {
        const members = () =>
          ctx.db.query(`SELECT user_id FROM class_members WHERE class_id = $1 ORDER BY user_id`, [f.cls.id]);
        const before = await members();
        const otherSchool = (await createSchool(ctx)).id;
        const stranger = await createUser(ctx, { schoolId: otherSchool, studentId: 's-1' });
        const schoolless = await createUser(ctx);
        for (const user of [stranger, schoolless]) {
          const res = await post(user, '/classes/join', { inviteCode: f.cls.inviteCode });
          expect(res.status).toBe(403);
          expect(res.body).toEqual(error('FORBIDDEN'));
        }
        expect(await members()).toEqual(before);
      });

      it.each<Actor>(['owner', 'admin', 'member'])(
        'answers 409 CONFLICT to the %s joining again, whatever school they belong to',
        async (actor) => {
          const restricted = await createClassWithMembers(ctx, { schoolId });
          const res = await post(restricted[actor], '/classes/join', {
            inviteCode: restricted.cls.inviteCode,
          });
          expect(res.status).toBe(409);
          expect(res.body).toEqual(error('CONFLICT'));
        },
      );

      it('admits users of any school to an unrestricted class', async () => {
        const open = await createClassWithMembers(ctx);
        const student = await createUser(ctx, { schoolId, studentId: 's-2' });
        await post(student, '/classes/join', { inviteCode: open.cls.inviteCode }).expect(200);
      });
    });
  });

  describe('POST /classes/:classId/invite-code', () => {
    it.each<Actor>(['owner', 'admin'])(
      'lets the %s replace the code; the old one dies at once',
      async (actor) => {
        const f = await createClassWithMembers(ctx);
        const res = await ctx.http
          .post(`/classes/${f.cls.id}/invite-code`)
          .set('Authorization', f[actor].auth)
          .expect(200);
        expect(res.body).toEqual({ inviteCode: expect.stringMatching(INVITE_CODE) });
        expect(res.body.inviteCode).not.toBe(f.cls.inviteCode);

        const [late, other] = await Promise.all([createUser(ctx), createUser(ctx)]);
        const old = await post(late, '/classes/join', { inviteCode: f.cls.inviteCode });
        expect(old.status).toBe(404);
        expect(old.body).toEqual(error('NOT_FOUND'));
        await post(other, '/classes/join', { inviteCode: res.body.inviteCode }).expect(200);
        const summary = await ctx.http
          .get(`/classes/${f.cls.id}`)
          .set('Authorization', f.owner.auth)
          .expect(200);
        expect(summary.body.inviteCode).toBe(res.body.inviteCode);
      },
    );

    it('draws again when the new code is already taken by another class', async () => {
      const [taken, f] = await Promise.all([createClassWithMembers(ctx), createClassWithMembers(ctx)]);
      // The first ten draws spell the other class's code.
      const draws = jest.spyOn(crypto, 'randomInt');
      for (const char of taken.cls.inviteCode)
        draws.mockImplementationOnce(() => INVITE_CODE_ALPHABET.indexOf(char));
      try {
        const res = await ctx.http
          .post(`/classes/${f.cls.id}/invite-code`)
          .set('Authorization', f.owner.auth)
          .expect(200);
        expect(res.body.inviteCode).toMatch(INVITE_CODE);
        expect(res.body.inviteCode).not.toBe(taken.cls.inviteCode);
        expect(draws).toHaveBeenCalledTimes(20);
      } finally {
        draws.mockRestore();
      }
      const joined = await post(f.outsider, '/classes/join', { inviteCode: taken.cls.inviteCode }).expect(
        200,
      );
      expect(joined.body.id).toBe(taken.cls.id);
    });

    it('forbids a MEMBER and keeps the code', async () => {
      const f = await createClassWithMembers(ctx);
      const res = await ctx.http.post(`/classes/${f.cls.id}/invite-code`).set('Authorization', f.member.auth);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
      await post(f.outsider, '/classes/join', { inviteCode: f.cls.inviteCode }).expect(200);
    });

    it.each(['removed', 'demoted'] as const)(
      'answers 403 and keeps the code when the ADMIN is %s while the rotation waits',
      async (how) => {
        const f = await createClassWithMembers(ctx);
        const res = await duringClassChange(ctx, f.cls.id, adminLoss(f, how), () =>
          ctx.http.post(`/classes/${f.cls.id}/invite-code`).set('Authorization', f.admin.auth),
        );
        expect(res.status).toBe(403);
        expect(res.body).toEqual(error('FORBIDDEN'));
        await post(f.outsider, '/classes/join', { inviteCode: f.cls.inviteCode }).expect(200);
      },
    );

    it('forbids it on the personal class', async () => {
      const user = await createUser(ctx);
      const res = await ctx.http
        .post(`/classes/${user.personalClassId}/invite-code`)
        .set('Authorization', user.auth);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(error('FORBIDDEN'));
    });
  });
});
