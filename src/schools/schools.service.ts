import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { SchoolDto } from './dto/school.dto';
import { SchoolsRepository } from './schools.repository';
import { toSchoolDto } from './schools.mapper';

/** Upper bound of one listing; a deployment with more schools narrows the list with `q`. */
export const SCHOOL_LIST_LIMIT = 1000;
export const SCHOOL_NAME_MAX_LENGTH = 200;

@Injectable()
export class SchoolsService {
  constructor(private readonly schools: SchoolsRepository) {}

  /** Sorted by name, ignoring case; `q` keeps the names containing it, case-insensitively. */
  async list(q?: string): Promise<SchoolDto[]> {
    return (await this.schools.list(q, SCHOOL_LIST_LIMIT)).map(toSchoolDto);
  }

  /** Operator CLI. */
  async add(rawName: string): Promise<SchoolDto> {
    const name = rawName.trim();
    if (name.length === 0 || name.length > SCHOOL_NAME_MAX_LENGTH) {
      throw AppError.validation(`School name must be 1 to ${SCHOOL_NAME_MAX_LENGTH} characters`);
    }
    return toSchoolDto(await this.schools.add(name));
  }
}
