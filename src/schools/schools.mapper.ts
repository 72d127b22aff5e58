import { iso } from '../common/utils/time';
import { SchoolDto } from './dto/school.dto';
import { School } from './entities/school.entity';

export function toSchoolDto(school: School): SchoolDto {
  return { id: school.id, name: school.name, createdAt: iso(school.createdAt)! };
}
