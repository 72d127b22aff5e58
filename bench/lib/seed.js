'use strict';
/*
 * Realistic data written with SQL straight into a migrated database (the server under test migrated it).
 * Every bench user has the password BENCH_PASSWORD (bcrypt, the service's cost).
 */
const { hashSync } = require('bcrypt');

const BENCH_PASSWORD = 'bench-password-1';
/** src/auth/password-hasher.ts BCRYPT_COST: logins cost what they cost in production. */
const BCRYPT_COST = 10;
const PAGE_SIZE = 20;
const TIMEZONES = ['UTC', 'Europe/Berlin', 'Asia/Shanghai', 'America/New_York'];
/** REMINDER_HOURS_BEFORE_DUE of the server under test (its default). */
const REMINDER_HOURS = [24];

const one = async (db, sql, params) => (await db.query(sql, params)).rows[0];
const all = async (db, sql, params) => (await db.query(sql, params)).rows;

async function inTransaction(db, work) {
  await db.query('BEGIN');
  try {
    const result = await work();
    await db.query('COMMIT');
    return result;
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
}

/** A shared class owned by `ownerId`; `members` are [{id, role}] besides the owner. */
async function createClass(db, name, ownerId, members, schoolId = null) {
  const cls = await one(
    db,
    `INSERT INTO classes (name, owner_id, school_id, invite_code) VALUES ($1, $2, $3, upper(substr(md5(random()::text), 1, 10)))
     RETURNING id`,
    [name, ownerId, schoolId],
  );
  await db.query(
    `INSERT INTO class_members (class_id, user_id, role)
     SELECT $1::uuid, $2::uuid, 'OWNER'::varchar UNION ALL SELECT $1, unnest($3::uuid[]), unnest($4::varchar[])`,
    [cls.id, ownerId, members.map((m) => m.id), members.map((m) => m.role)],
  );
  return cls.id;
}

/** `count` published tasks in a class, due dates spread around now; answers their ids in creation order. */
async function createTasks(db, classId, authorId, count) {
  const rows = await all(
    db,
    `INSERT INTO tasks (class_id, title, description, source_text, start_at, due_at, allow_late_submission,
                        created_by, is_published, published_at, created_at, updated_at)
     SELECT $1, 'Exercise ' || g || ': reading, questions and a short essay',
            repeat('Read chapter ' || g || ' and answer the questions below in full sentences. ', 30),
            'Exercise ' || g || ' due next week, read the chapter and write the essay',
            CASE WHEN g % 4 = 0 THEN least(now() - interval '1 day', due) - interval '1 hour' END,
            due,
            g % 7 <> 0, $2, true,
            now() - interval '60 days' + g * interval '1 hour',
            now() - interval '60 days' + g * interval '1 hour',
            now() - interval '60 days' + g * interval '1 hour'
       FROM generate_series(1, $3::int) g
       CROSS JOIN LATERAL (SELECT now() + (g - $3::int / 3) * interval '1 day' AS due) d
      ORDER BY g
     RETURNING id`,
    [classId, authorId, count],
  );
  return rows.map((row) => row.id);
}

/** Submissions of about `share` of the class's MEMBERs to each of `taskIds` (deterministic choice). */
async function createSubmissions(db, classId, taskIds, share) {
  await db.query(
    `INSERT INTO submissions (task_id, user_id, content, first_submitted_at, last_updated_at, score, feedback,
                              reviewed_at)
     SELECT t.id, m.user_id, repeat('My answer, with an argument and an example. ', 12),
            now() - interval '3 days', now() - interval '2 days',
            CASE WHEN abs(hashtext(t.id::text || m.user_id::text)) % 2 = 0 THEN (abs(hashtext(m.user_id::text)) % 10000) / 100.0 END,
            CASE WHEN abs(hashtext(t.id::text || m.user_id::text)) % 4 = 0 THEN 'Good work, see the comments.' END,
            CASE WHEN abs(hashtext(t.id::text || m.user_id::text)) % 2 = 0 THEN now() - interval '1 day' END
       FROM tasks t JOIN class_members m ON m.class_id = t.class_id AND m.role = 'MEMBER'
      WHERE t.id = ANY($2::uuid[]) AND t.class_id = $1
        AND abs(hashtext(t.id::text || m.user_id::text || 's')) % 1000 < $3::float8 * 1000`,
    [classId, taskIds, share],
  );
}

/**
 * `count` users `<prefix><n>@bench.test` (nickname mostly set, school and student number, time zones mixed).
 * `personal`: each gets the personal class the service gives every account.
 */
async function createUsers(db, prefix, count, { schoolId, passwordHash, personal = false }) {
  const users = await all(
    db,
    `INSERT INTO users (email, password_hash, nickname, timezone, school_id, student_id)
     SELECT $1 || g || '@bench.test', $2,
            CASE WHEN g % 10 = 0 THEN NULL ELSE 'Student ' || $1 || g || ' 学生' END,
            ($4::varchar[])[1 + g % 4], $3::uuid, CASE WHEN $3::uuid IS NOT NULL THEN $1 || lpad(g::text, 7, '0') END
       FROM generate_series(0, $5::int - 1) g
      ORDER BY g
     RETURNING id, email`,
    [prefix, passwordHash, schoolId, TIMEZONES, count],
  );
  if (personal) {
    await db.query(
      `WITH personal AS (
         INSERT INTO classes (name, owner_id, is_personal) SELECT 'Personal', unnest($1::uuid[]), true
         RETURNING id, owner_id)
       INSERT INTO class_members (class_id, user_id, role) SELECT id, owner_id, 'OWNER' FROM personal`,
      [users.map((u) => u.id)],
    );
  }
  return users;
}

/**
 * A roster class: its owner, `members` new MEMBERs (`<prefix><n>`) and one published task where 80 % of
 * them submitted, `attachments` of those submissions with one attachment row. For the grader's list and
 * the CSV export.
 */
async function createRosterClass(db, { ownerId, prefix, members, schoolId, passwordHash, attachments = 0 }) {
  const users = await createUsers(db, prefix, members, { schoolId, passwordHash });
  const classId = await createClass(
    db,
    `Roster, "${prefix}" ${members}`,
    ownerId,
    users.map((u) => ({ id: u.id, role: 'MEMBER' })),
  );
  const [taskId] = await createTasks(db, classId, ownerId, 1);
  await db.query(`UPDATE tasks SET title = 'Essay: "Streams", part 1' WHERE id = $1`, [taskId]);
  await createSubmissions(db, classId, [taskId], 0.8);
  await db.query(
    `INSERT INTO submission_attachments (submission_id, file_key, original_name, mime_type, size_bytes)
     SELECT s.id, md5(s.id::text), 'essay.pdf', 'application/pdf', 123456
       FROM submissions s WHERE s.task_id = $1 ORDER BY s.id LIMIT $2`,
    [taskId, attachments],
  );
  return { classId, taskId };
}

/**
 * The data set of the throughput scenarios:
 * - a class of 40 (owner, one ADMIN, 38 MEMBERs), each with a personal class of 5 tasks, 30 tasks (every third blocked
 *   by the one before, attachments on every third), ~70 % submitted, ~80 % viewed;
 * - 300 notifications in each of the 40 inboxes (200 read), newest first paging by 20;
 * - classes of the same 40 with 3 and with 300 tasks (statement counts of the task list);
 * - roster classes of 10 and 300 members (statement counts of the grader's list and the export);
 * - a class of 10,000 members with one task 80 % submitted (export, publication fan-out).
 */
async function seedMain(db) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const school = await one(db, `INSERT INTO schools (name) VALUES ('Bench School') RETURNING id`);
    const users = await createUsers(db, 'user', 40, { schoolId: school.id, passwordHash, personal: true });
    // Personal classes are to-do lists: a few tasks each, so tasks spread over many classes as they do in use
    // (PostgreSQL's choice of a generic plan for the prepared task list depends on that spread).
    await db.query(
      `INSERT INTO tasks (class_id, title, due_at, created_by, is_published, published_at)
       SELECT c.id, 'To do ' || g, now() + g * interval '1 day', c.owner_id, true, now() - interval '1 day'
         FROM classes c CROSS JOIN generate_series(1, 5) g WHERE c.is_personal`,
    );
    const [owner, admin, ...members] = users;
    const roles = [{ id: admin.id, role: 'ADMIN' }, ...members.map((m) => ({ id: m.id, role: 'MEMBER' }))];

    const classId = await createClass(db, 'Bench class 7B', owner.id, roles, school.id);
    const taskIds = await createTasks(db, classId, owner.id, 30);
    const blocked = new Set(taskIds.filter((_, i) => i % 3 === 2));
    await db.query(
      `UPDATE tasks t SET blocked_by = ARRAY[b.blocker] FROM unnest($1::uuid[], $2::uuid[]) AS b(task, blocker)
        WHERE t.id = b.task`,
      [taskIds.filter((id) => blocked.has(id)), taskIds.filter((_, i) => i % 3 === 1)],
    );
    await db.query(
      `INSERT INTO task_attachments (task_id, file_key, original_name, mime_type, size_bytes)
       SELECT t, md5(t::text || n), 'worksheet-' || n || '.pdf', 'application/pdf', 200000
         FROM unnest($1::uuid[]) t, generate_series(1, 2) n`,
      [taskIds.filter((_, i) => i % 3 === 0)],
    );
    await createSubmissions(db, classId, taskIds, 0.7);
    await db.query(
      `INSERT INTO task_user_states (task_id, user_id, viewed_at, tags)
       SELECT t.id, m.user_id, now() - interval '4 days', CASE WHEN m.user_id::text < '8' THEN '{exam}'::varchar[] ELSE '{}' END
         FROM tasks t JOIN class_members m ON m.class_id = t.class_id
        WHERE t.class_id = $1 AND abs(hashtext(t.id::text || m.user_id::text || 'v')) % 10 < 8`,
      [classId],
    );
    await db.query(
      `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at,
                                  hours_before, title, content, status, read_at, created_at)
       SELECT m.user_id, CASE WHEN h = 0 THEN 'TASK_PUBLISHED' ELSE 'TASK_DUE_REMINDER' END, t.id, t.class_id,
              t.title, 'Bench class 7B', t.start_at, t.due_at, NULLIF(h, 0),
              'Reminder: ' || t.title || ' is due Fri 01 Mar 2030 18:00 (UTC)',
              '"' || t.title || '" in Bench class 7B is due Fri 01 Mar 2030 18:00 (UTC), and you have not submitted it yet.',
              'SENT',
              CASE WHEN k >= 100 THEN now() - k * interval '7 minutes' END,
              now() - k * interval '7 minutes' - random() * interval '1 minute'
         FROM class_members m
         JOIN LATERAL (SELECT id, title, class_id, start_at, due_at, row_number() OVER (ORDER BY created_at, id) AS i
                         FROM tasks WHERE class_id = $1) t ON true
         CROSS JOIN generate_series(0, 9) h
         CROSS JOIN LATERAL (SELECT ((t.i - 1) * 10 + h)::int AS k) o
        WHERE m.class_id = $1`,
      [classId],
    );
    const cursors = await all(
      db,
      `SELECT user_id, id FROM (
         SELECT user_id, id, row_number() OVER (PARTITION BY user_id ORDER BY created_at DESC, id DESC) AS n
           FROM notifications WHERE status = 'SENT') ranked
        WHERE n = $1`,
      [PAGE_SIZE * 14],
    );

    const small = await createClass(db, 'Three tasks', owner.id, roles);
    const large = await createClass(db, 'Three hundred tasks', owner.id, roles);
    await createTasks(db, small, owner.id, 3);
    await createTasks(db, large, owner.id, 300);

    const roster10 = await createRosterClass(db, {
      ownerId: owner.id,
      prefix: 'r10-',
      members: 9,
      schoolId: school.id,
      passwordHash,
      attachments: 3,
    });
    const roster300 = await createRosterClass(db, {
      ownerId: owner.id,
      prefix: 'r300-',
      members: 299,
      schoolId: school.id,
      passwordHash,
      attachments: 90,
    });
    const big = await createRosterClass(db, {
      ownerId: owner.id,
      prefix: 'm',
      members: 10_000,
      schoolId: school.id,
      passwordHash,
    });

    await markNotified(db);
    const writable = await all(
      db,
      `SELECT id FROM tasks WHERE id = ANY($1::uuid[]) AND blocked_by = '{}' AND (allow_late_submission OR due_at > now())`,
      [taskIds],
    );
    return {
      password: BENCH_PASSWORD,
      owner,
      admin,
      members,
      classId,
      taskIds,
      writableTaskIds: writable.map((row) => row.id),
      cursorOf: new Map(cursors.map((row) => [row.user_id, row.id])),
      smallClassId: small,
      largeClassId: large,
      roster10,
      roster300,
      big,
    };
  });
}

/**
 * Marks every seeded task as announced and reminded, as the notification jobs would have done long ago, so
 * the jobs of the server under test do not fan out thousands of notifications and mails in the middle of
 * a measurement (publications made during the bench are still announced).
 */
async function markNotified(db) {
  await db.query(
    `INSERT INTO notification_task_publications (task_id) SELECT id FROM tasks WHERE is_published`,
  );
  await db.query(
    `INSERT INTO notification_task_reminders (task_id, hours_before, due_at)
     SELECT t.id, h, t.due_at FROM tasks t CROSS JOIN unnest($1::float8[]) h WHERE t.is_published AND t.due_at IS NOT NULL`,
    [REMINDER_HOURS],
  );
}

/** A database holding one roster class of `members` MEMBERs (export of very large classes). */
async function seedRoster(db, members) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const school = await one(db, `INSERT INTO schools (name) VALUES ('Bench School') RETURNING id`);
    const [owner] = await createUsers(db, 'owner', 1, { schoolId: school.id, passwordHash, personal: true });
    const roster = await createRosterClass(db, {
      ownerId: owner.id,
      prefix: 'm',
      members,
      schoolId: school.id,
      passwordHash,
    });
    const tiny = await createRosterClass(db, {
      ownerId: owner.id,
      prefix: 'w',
      members: 3,
      schoolId: school.id,
      passwordHash,
    });
    await markNotified(db);
    return { owner, ...roster, warmUpTaskId: tiny.taskId };
  });
}

/** An owner with a personal class, and a class `name` of `members` new MEMBERs `<prefix><n>`. */
async function createOwnedClass(db, name, prefix, members, passwordHash) {
  const [owner] = await createUsers(db, 'owner', 1, { schoolId: null, passwordHash, personal: true });
  const users = await createUsers(db, prefix, members, { schoolId: null, passwordHash });
  const classId = await createClass(
    db,
    name,
    owner.id,
    users.map((u) => ({ id: u.id, role: 'MEMBER' })),
  );
  return { owner, users, classId };
}

/** A class of `members` MEMBERs and its owner (publication fan-out). */
async function seedFanout(db, members) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const { owner, classId } = await createOwnedClass(db, 'Fan-out class', 'm', members, passwordHash);
    return { owner, classId };
  });
}

/**
 * A class of `members` MEMBERs and its owner with `tasks` published tasks (no start time) due in 30 days,
 * announced and reminded of: a reminder run moves one task's due time so that its reminder moment comes.
 */
async function seedReminders(db, members, tasks) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const { owner, classId } = await createOwnedClass(db, 'Reminder class', 'm', members, passwordHash);
    const taskIds = await createTasks(db, classId, owner.id, tasks);
    await db.query(
      `UPDATE tasks SET start_at = NULL, due_at = now() + interval '30 days' WHERE id = ANY($1::uuid[])`,
      [taskIds],
    );
    await markNotified(db);
    return { owner, classId, taskIds };
  });
}

/**
 * The live inbox and calendar feed data set: a class of `streamUsers` MEMBERs with one published task (each
 * member opens up to 5 live inbox streams while another reads the task), and a member of `feedClasses`
 * classes of `tasksPerClass` tasks each, about half of them submitted (the calendar feed).
 */
async function seedLive(db, { streamUsers, feedClasses, tasksPerClass }) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const { owner, users, classId } = await createOwnedClass(
      db,
      'Live class',
      's',
      streamUsers,
      passwordHash,
    );
    const [taskId] = await createTasks(db, classId, owner.id, 1);
    const [reader] = await createUsers(db, 'calendar', 1, { schoolId: null, passwordHash, personal: true });
    for (let n = 0; n < feedClasses; n += 1) {
      const feedClassId = await createClass(db, `Feed class ${n}`, owner.id, [
        { id: reader.id, role: 'MEMBER' },
      ]);
      const taskIds = await createTasks(db, feedClassId, owner.id, tasksPerClass);
      await createSubmissions(db, feedClassId, taskIds, 0.5);
    }
    await markNotified(db);
    return { owner, users, classId, taskId, reader };
  });
}

/**
 * Grading: a class of `members` MEMBERs, one published task (grades released at once) with a rubric of
 * `criteria` criteria of `levels` levels, every member's submission to it. Answers the owner, the task, the
 * submission ids and the rubric's ids ({criterionId, levelIds} per criterion, levels by points, highest first).
 */
async function seedGrading(db, { members, criteria, levels }) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const { owner, classId } = await createOwnedClass(db, 'Grading class', 'g', members, passwordHash);
    const [taskId] = await createTasks(db, classId, owner.id, 1);
    await db.query(`UPDATE tasks SET start_at = NULL, due_at = now() + interval '7 days' WHERE id = $1`, [
      taskId,
    ]);
    const submissions = await all(
      db,
      `INSERT INTO submissions (task_id, user_id, content)
       SELECT $1, m.user_id, repeat('My answer, with an argument and an example. ', 12)
         FROM class_members m WHERE m.class_id = $2 AND m.role = 'MEMBER'
       RETURNING id`,
      [taskId, classId],
    );
    await db.query(`INSERT INTO task_rubrics (task_id) VALUES ($1)`, [taskId]);
    const rubric = [];
    for (let c = 0; c < criteria; c += 1) {
      const { id: criterionId } = await one(
        db,
        `INSERT INTO rubric_criteria (id, task_id, position, title, description)
         VALUES (gen_random_uuid(), $1, $2, $3, 'What the criterion looks at, in a sentence.') RETURNING id`,
        [taskId, c, `Criterion ${c + 1}`],
      );
      const levelRows = await all(
        db,
        `INSERT INTO rubric_levels (id, criterion_id, position, title, points)
         SELECT gen_random_uuid(), $1, g, 'Level ' || g, ($2::int - 1 - g) * 2.5 FROM generate_series(0, $2::int - 1) g
         ORDER BY g
         RETURNING id`,
        [criterionId, levels],
      );
      rubric.push({ criterionId, levelIds: levelRows.map((row) => row.id) });
    }
    await db.query(`UPDATE tasks SET rubric_max_points = $2 WHERE id = $1`, [
      taskId,
      criteria * (levels - 1) * 2.5,
    ]);
    await markNotified(db);
    return { owner, classId, taskId, submissionIds: submissions.map((row) => row.id), rubric };
  });
}

/**
 * The gradebook's class: `members` MEMBERs and `tasks` published tasks (due dates spread around now, every
 * fifth with a rubric maximum); about half the cells submitted, about a third of all cells graded (released),
 * a few returned, a few extensions. Answers the owner, the class and one of its tasks.
 */
async function seedGradebook(db, members, tasks) {
  const passwordHash = hashSync(BENCH_PASSWORD, BCRYPT_COST);
  return inTransaction(db, async () => {
    const school = await one(db, `INSERT INTO schools (name) VALUES ('Bench School') RETURNING id`);
    const [owner] = await createUsers(db, 'owner', 1, { schoolId: school.id, passwordHash, personal: true });
    const users = await createUsers(db, 'g', members, { schoolId: school.id, passwordHash });
    const classId = await createClass(
      db,
      'Gradebook class',
      owner.id,
      users.map((u) => ({ id: u.id, role: 'MEMBER' })),
      school.id,
    );
    const taskIds = await createTasks(db, classId, owner.id, tasks);
    await db.query(
      `UPDATE tasks SET start_at = NULL, rubric_max_points = CASE WHEN abs(hashtext(id::text)) % 5 = 0 THEN 20 END
        WHERE class_id = $1`,
      [classId],
    );
    await db.query(
      `INSERT INTO submissions (task_id, user_id, content, first_submitted_at, last_updated_at, score, reviewer_id,
                                reviewed_at, released_at, status, version)
       SELECT t.id, m.user_id, 'My answer', t.due_at - interval '1 hour' + (h % 3) * interval '1 hour',
              t.due_at - interval '1 hour',
              CASE WHEN h % 3 < 2 THEN (h % 2000) / 100.0 END,
              CASE WHEN h % 3 < 2 THEN $2::uuid END,
              CASE WHEN h % 3 < 2 THEN now() END,
              CASE WHEN h % 3 < 2 THEN now() END,
              CASE WHEN h % 50 = 0 THEN 'RETURNED' ELSE 'SUBMITTED' END,
              1 + h % 3
         FROM tasks t JOIN class_members m ON m.class_id = t.class_id AND m.role = 'MEMBER'
        CROSS JOIN LATERAL (SELECT abs(hashtext(t.id::text || m.user_id::text)) AS h) k
        WHERE t.class_id = $1 AND (h / 3) % 2 = 0`,
      [classId, owner.id],
    );
    await db.query(
      `INSERT INTO task_extensions (task_id, user_id, class_id, due_at, created_by)
       SELECT t.id, m.user_id, t.class_id, t.due_at + interval '3 days', $2
         FROM tasks t JOIN class_members m ON m.class_id = t.class_id AND m.role = 'MEMBER'
        WHERE t.class_id = $1 AND abs(hashtext(t.id::text || m.user_id::text)) % 100 = 7`,
      [classId, owner.id],
    );
    await markNotified(db);
    return { owner, classId, taskId: taskIds[0] };
  });
}

module.exports = {
  BENCH_PASSWORD,
  PAGE_SIZE,
  REMINDER_HOURS,
  seedMain,
  seedRoster,
  seedFanout,
  seedReminders,
  seedLive,
  seedGrading,
  seedGradebook,
};
