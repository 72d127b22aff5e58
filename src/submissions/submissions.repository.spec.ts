import { DataSource } from 'typeorm';
import { createTestDataSource, seedClass, TestDataSource } from '../../test/utils/test-data-source';
import { AppError } from '../common/errors/app-error';
import { one } from '../database/sql';
import { Notifier } from '../notifications/production/notifier';
import { SubmissionsRepository } from './submissions.repository';

describe('SubmissionsRepository (real PostgreSQL)', () => {
  let source: TestDataSource;
  let db: DataSource;
  let submissions: SubmissionsRepository;
  let ownerId: string;
  let taskId: string;

  beforeAll(async () => {
    source = await createTestDataSource();
    db = source.db;
    submissions = new SubmissionsRepository(db, new Notifier(source.config));
    let classId: string;
    ({ ownerId, classId } = await seedClass(db, 'owner@example.test'));
    ({ id: taskId } = (await one<{ id: string }>(
      db,
      `INSERT INTO tasks (class_id, title, is_published, published_at, created_by)
       VALUES ($1, 'Essay', true, now(), $2) RETURNING id`,
      [classId, ownerId],
    ))!);
  });

  afterAll(() => source.close());

  it('writes the caller submission in one statement and reads it back with entity property names', async () => {
    const saved = await submissions.upsertMine(taskId, ownerId, 'first draft', 300);
    expect(saved).toMatchObject({
      late: false,
      locked: false,
      content: 'first draft',
      attachments: [],
      version: 1,
      status: 'SUBMITTED',
    });
    const mine = await submissions.findMine(db, taskId, ownerId);
    expect(mine).toMatchObject({ id: saved!.id, taskId, userId: ownerId, content: 'first draft' });
    // Within the window a write amends version 1; with a window of 0 it makes version 2.
    expect(await submissions.touchMine(db, taskId, ownerId, 300)).toEqual({ id: saved!.id, version: 1 });
    expect(await submissions.touchMine(db, taskId, ownerId, 0)).toEqual({ id: saved!.id, version: 2 });
    const stranger = '00000000-0000-4000-8000-000000000000';
    expect(await submissions.upsertMine(taskId, stranger, 'x', 300)).toBeNull();
    expect(await submissions.reviseMine(db, taskId, stranger, 300)).toBeNull();
  });

  it('adds and removes attachments, keeping the file of one an older version holds', async () => {
    const written = await submissions.touchMine(db, taskId, ownerId, 300);
    const file = { fileKey: 'key-1', originalName: 'a.txt', mimeType: 'text/plain', sizeBytes: 3 };
    const added = await submissions.addAttachment(db, written, file);
    expect(added).toMatchObject({
      submissionId: written.id,
      fileKey: 'key-1',
      addedVersion: written.version,
    });
    expect(await submissions.countAttachments(db, written.id)).toBe(1);
    // Removed in the version that added it: gone with its file.
    expect(await submissions.removeAttachment(db, written.id, written.version, added.id)).toEqual({
      fileKey: 'key-1',
      kept: false,
    });
    expect(await submissions.removeAttachment(db, written.id, written.version, added.id)).toBeNull();
    const older = await submissions.addAttachment(db, written, { ...file, fileKey: 'key-2' });
    expect(await submissions.removeAttachment(db, written.id, written.version + 1, older.id)).toEqual({
      fileKey: 'key-2',
      kept: true,
    });
  });

  it('grades, and answers the exemplary-needs-score check as a validation error', async () => {
    const { id } = (await submissions.findMine(db, taskId, ownerId))!;
    const exemplaryWithoutScore = submissions.grade(db, taskId, id, {
      isExemplary: true,
      reviewerId: ownerId,
    });
    await expect(exemplaryWithoutScore).rejects.toBeInstanceOf(AppError);
    await expect(exemplaryWithoutScore).rejects.toMatchObject({
      status: 400,
      message: 'isExemplary requires a score',
    });
    const graded = await submissions.grade(db, taskId, id, {
      score: 9.5,
      isExemplary: true,
      reviewerId: ownerId,
    });
    expect(graded).toMatchObject({
      score: '9.50',
      isExemplary: true,
      reviewerId: ownerId,
      gradeRelease: 'IMMEDIATE',
    });
    expect(await submissions.grade(db, taskId, ownerId, { score: 1, reviewerId: ownerId })).toBeNull();
  });

  it('releases a graded submission once', async () => {
    const { id } = (await submissions.findMine(db, taskId, ownerId))!;
    await one(db, `UPDATE submissions SET released_at = NULL WHERE id = $1`, [id]);
    const [released] = await submissions.release(db, taskId, { userIds: [ownerId] });
    expect(released).toEqual({ id, releasedAt: expect.any(Date) });
    expect(await submissions.release(db, taskId, {})).toEqual([]);
  });
});
