import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts, classes, tasks and submissions. Notifications and later features add their own migrations.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE schools (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(200) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_schools_name UNIQUE (name)
      );

      CREATE TABLE settings (
        key varchar(100) PRIMARY KEY,
        value jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email varchar(320) NOT NULL,
        password_hash varchar(100) NOT NULL,
        nickname varchar(100),
        timezone varchar(64) NOT NULL DEFAULT 'UTC',
        school_id uuid REFERENCES schools(id) ON DELETE RESTRICT,
        student_id varchar(64),
        is_active boolean NOT NULL DEFAULT true,
        token_version integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_users_email UNIQUE (email),
        CONSTRAINT uq_users_school_student UNIQUE (school_id, student_id),
        CONSTRAINT ck_users_student_needs_school CHECK (student_id IS NULL OR school_id IS NOT NULL)
      );

      CREATE TABLE auth_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        purpose varchar(20) NOT NULL CHECK (purpose IN ('REGISTRATION', 'PASSWORD_RESET', 'EMAIL_CHANGE')),
        token_hash char(64) NOT NULL,
        email varchar(320) NOT NULL,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_auth_tokens_hash UNIQUE (token_hash)
      );

      -- One row per verification, reset or e-mail-change mail: the per-address limit is counted here.
      CREATE TABLE email_sends (
        id bigserial PRIMARY KEY,
        address varchar(320) NOT NULL,
        purpose varchar(20) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX ix_email_sends_address_time ON email_sends (address, created_at);

      CREATE TABLE classes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(100) NOT NULL,
        description varchar(2000),
        color char(7) NOT NULL DEFAULT '#6366f1',
        is_personal boolean NOT NULL DEFAULT false,
        owner_id uuid NOT NULL REFERENCES users(id) ON DELETE RESTRICT,
        school_id uuid REFERENCES schools(id) ON DELETE RESTRICT,
        invite_code varchar(10),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_classes_invite_code UNIQUE (invite_code),
        CONSTRAINT ck_classes_personal_no_invite CHECK (NOT is_personal OR invite_code IS NULL)
      );
      CREATE UNIQUE INDEX uq_classes_one_personal_per_owner ON classes (owner_id) WHERE is_personal;

      CREATE TABLE class_members (
        class_id uuid NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role varchar(10) NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
        joined_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (class_id, user_id)
      );
      CREATE INDEX ix_class_members_user ON class_members (user_id);
      -- At most one OWNER per class; the owner_id foreign key below guarantees at least one.
      CREATE UNIQUE INDEX uq_class_members_one_owner ON class_members (class_id) WHERE role = 'OWNER';

      CREATE TABLE tasks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        class_id uuid NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
        title varchar(200) NOT NULL,
        description text,
        source_text text,
        start_at timestamptz,
        due_at timestamptz,
        allow_late_submission boolean NOT NULL DEFAULT true,
        blocked_by uuid[] NOT NULL DEFAULT '{}',
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        is_published boolean NOT NULL DEFAULT false,
        published_at timestamptz,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_tasks_due_after_start CHECK (due_at IS NULL OR start_at IS NULL OR due_at >= start_at)
      );
      CREATE INDEX ix_tasks_class_created ON tasks (class_id, created_at, id) WHERE deleted_at IS NULL;
      CREATE INDEX ix_tasks_drafts ON tasks (class_id, created_by, created_at) WHERE NOT is_published AND deleted_at IS NULL;

      CREATE TABLE task_attachments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        file_key varchar(64) NOT NULL,
        original_name varchar(255) NOT NULL,
        mime_type varchar(255),
        size_bytes bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_task_attachments_file_key UNIQUE (file_key)
      );
      CREATE INDEX ix_task_attachments_task ON task_attachments (task_id, created_at);

      CREATE TABLE task_user_states (
        task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        viewed_at timestamptz,
        tags varchar(32)[] NOT NULL DEFAULT '{}',
        sort_order double precision,
        PRIMARY KEY (task_id, user_id)
      );
      CREATE INDEX ix_task_user_states_user ON task_user_states (user_id);

      CREATE TABLE task_markdown_cache (
        task_id uuid PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
        markdown text NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX ix_task_markdown_cache_expires ON task_markdown_cache (expires_at);

      CREATE TABLE submissions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        content text,
        first_submitted_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        score numeric(12, 2),
        feedback varchar(10000),
        reviewer_id uuid REFERENCES users(id) ON DELETE SET NULL,
        reviewed_at timestamptz,
        is_exemplary boolean NOT NULL DEFAULT false,
        CONSTRAINT uq_submissions_task_user UNIQUE (task_id, user_id),
        CONSTRAINT ck_submissions_exemplary_needs_score CHECK (NOT is_exemplary OR score IS NOT NULL)
      );
      CREATE INDEX ix_submissions_user ON submissions (user_id);

      CREATE TABLE submission_attachments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        submission_id uuid NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
        file_key varchar(64) NOT NULL,
        original_name varchar(255) NOT NULL,
        mime_type varchar(255),
        size_bytes bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_submission_attachments_file_key UNIQUE (file_key)
      );
      CREATE INDEX ix_submission_attachments_submission ON submission_attachments (submission_id, created_at);
    `);
    // classes.owner_id must name a membership whose role is OWNER: with the partial unique index above a
    // class has exactly one OWNER. Deferred so a class and its first membership, or the two role changes of
    // a transfer, are checked together at commit.
    await queryRunner.query(`
      ALTER TABLE classes ADD COLUMN owner_role varchar(10) NOT NULL DEFAULT 'OWNER' CHECK (owner_role = 'OWNER');
      ALTER TABLE class_members ADD CONSTRAINT uq_class_members_class_user_role UNIQUE (class_id, user_id, role);
      ALTER TABLE classes ADD CONSTRAINT fk_classes_owner_membership
        FOREIGN KEY (id, owner_id, owner_role) REFERENCES class_members (class_id, user_id, role)
        DEFERRABLE INITIALLY DEFERRED;
      INSERT INTO settings (key, value) VALUES ('auth.registration_open', 'true'::jsonb);
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE classes DROP CONSTRAINT fk_classes_owner_membership;
      DROP TABLE submission_attachments, submissions, task_markdown_cache, task_user_states, task_attachments,
        tasks, class_members, classes, email_sends, auth_tokens, users, settings, schools;
    `);
  }
}
