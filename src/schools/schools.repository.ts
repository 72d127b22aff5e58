import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { School } from './entities/school.entity';

/** The schools users pick; a taken name comes out as the constraint table's answer (409). */
@Injectable()
export class SchoolsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Sorted by name ignoring case, at most `limit`; `q` keeps the names containing it, ignoring case. */
  list(q: string | undefined, limit: number): Promise<School[]> {
    const query = this.dataSource
      .getRepository(School)
      .createQueryBuilder('school')
      .orderBy('lower(school.name)', 'ASC')
      .addOrderBy('school.name', 'ASC')
      .addOrderBy('school.id', 'ASC')
      .limit(limit);
    if (q) query.where(`strpos(lower(school.name), lower(:q)) > 0`, { q });
    return query.getMany();
  }

  add(name: string): Promise<School> {
    return withConstraintErrors(() => this.dataSource.getRepository(School).save({ name }), { name });
  }
}
