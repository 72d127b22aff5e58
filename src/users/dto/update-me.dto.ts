import { NicknameField, SchoolIdField, StudentIdField, TimezoneField } from './profile-fields';

/** Every field optional; null clears nickname, and clears school and student number together. */
export class UpdateMeDto {
  @NicknameField()
  nickname?: string | null;

  @TimezoneField()
  timezone?: string;

  @SchoolIdField()
  schoolId?: string | null;

  @StudentIdField()
  studentId?: string | null;
}
