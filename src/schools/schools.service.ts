import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { SchoolDto } from './dto/school.dto';
import { School } from './entities/school.entity';
import { toSchoolDto } from './schools.mapper';

/** Upper bound of one listing; a deployment with more schools narrows the list with `q`. */
export const SCHOOL_LIST_LIMIT = 1000;
export const SCHOOL_NAME_MAX_LENGTH = 200;

@Injectable()
export class SchoolsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Sorted by name, ignoring case; `q` keeps the names containing it, case-insensitively. */
  async list(q?: string): Promise<SchoolDto[]> {
    const query = this.dataSource
      .getRepository(School)
      .createQueryBuilder('school')
      .orderBy('lower(school.name)', 'ASC')
      .addOrderBy('school.name', 'ASC')
      .addOrderBy('school.id', 'ASC')
      .limit(SCHOOL_LIST_LIMIT);
    if (q) query.where(`strpos(lower(school.name), lower(:q)) > 0`, { q });
    return (await query.getMany()).map(toSchoolDto);
  }

  /** Operator CLI. */
  async add(rawName: string): Promise<SchoolDto> {
    const name = rawName.trim();
    if (name.length === 0 || name.length > SCHOOL_NAME_MAX_LENGTH) {
      throw AppError.validation(`School name must be 1 to ${SCHOOL_NAME_MAX_LENGTH} characters`);
    }
    const school = await withConstraintErrors(() => this.dataSource.getRepository(School).save({ name }), {
      name,
    });
    return toSchoolDto(school);
  }
}
