import { DataSource } from 'typeorm';
import { AccessRepository } from '../access/access.repository';
import { useTestDataSource } from '../../test/utils/test-data-source';
import { rows } from '../database/sql';
import { Transactions } from '../database/transactions';
import { ClassesRepository } from './classes.repository';
import { ClassRole } from './entities/class-member.entity';

describe('ClassesRepository (real PostgreSQL)', () => {
  let db: DataSource;
  let classes: ClassesRepository;

  useTestDataSource((created) => {
    db = created;
    classes = new ClassesRepository(db);
  });

  const newUser = async (email: string): Promise<string> =>
    (
      await rows<{ id: string }>(
        db,
        `INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id`,
        [email],
      )
    )[0].id;

  const newClass = (ownerId: string, code: string): Promise<string | undefined> =>
    db.transaction(async (manager) => {
      const fields = { name: 'Algebra', description: null, color: '#6366f1', ownerId, schoolId: null };
      const id = await classes.insert(manager, fields, code);
      if (id) await classes.addMember(manager, id, ownerId, ClassRole.OWNER);
      return id;
    });

  it('creates a class with its owner, and refuses a taken invite code by answering no id', async () => {
    const owner = await newUser('owner@example.test');
    const classId = (await newClass(owner, 'CODE000001'))!;
    expect(await newClass(owner, 'CODE000001')).toBeUndefined();
    const summary = await classes.getSummary(db, owner, classId);
    expect(summary).toMatchObject({ id: classId, my_role: ClassRole.OWNER, member_count: 1 });
    expect(await new AccessRepository(db).classRole(db, classId, owner)).toEqual({
      role: ClassRole.OWNER,
      is_personal: false,
    });
    const stranger = await newUser('stranger@example.test');
    expect(await new AccessRepository(db).classRole(db, classId, stranger)).toEqual({
      role: null,
      is_personal: false,
    });
    await expect(classes.getSummary(db, stranger, classId)).rejects.toMatchObject({ status: 404 });
  });

  it('adds a member once, and keeps the transaction usable after an invite-code collision', async () => {
    const owner = await newUser('second-owner@example.test');
    const member = await newUser('member@example.test');
    const first = (await newClass(owner, 'CODE000002'))!;
    const second = (await newClass(owner, 'CODE000003'))!;
    expect(await classes.addMemberIfAbsent(db, first, member, ClassRole.MEMBER)).toBe(true);
    expect(await classes.addMemberIfAbsent(db, first, member, ClassRole.MEMBER)).toBe(false);
    expect((await classes.listMembers(first)).map((m) => m.role)).toEqual([
      ClassRole.OWNER,
      ClassRole.MEMBER,
    ]);
    await new Transactions(db).run(async (manager) => {
      expect(await classes.trySetInviteCode(manager, second, 'CODE000002')).toBe(false);
      expect(await classes.trySetInviteCode(manager, second, 'CODE000004')).toBe(true);
    });
    expect((await classes.getSummary(db, owner, second)).invite_code).toBe('CODE000004');
    expect(await classes.delete(db, second)).toBe(1);
    expect(await classes.delete(db, second)).toBe(0);
  });
});
