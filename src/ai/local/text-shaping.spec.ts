import { deriveTitle, toMarkdown } from './text-shaping';

const titleOf = (text: string): string | null => deriveTitle(text).title;

describe('deriveTitle', () => {
  it.each([
    ['Hi class! 👋\nChemistry quiz Thursday', 'Chemistry quiz Thursday'],
    ['Dear students,\nSubmit the physics assignment.', 'Submit the physics assignment'],
    ['Kia ora koutou,\nSocial studies inquiry due today', 'Social studies inquiry due today'],
    ['各位同学好！\n数学作业', '数学作业'],
    ['Kia ora! Speech drafts due this Friday', 'Speech drafts due this Friday'],
    ['Good morning! Today we learned about fractions. Great job!', 'Today we learned about fractions'],
    ['[9:05 AM] Ms. Rivera: Lab safety quiz Friday', 'Lab safety quiz Friday'],
    ['14:20 Mr Patel: Maths homework due tomorrow', 'Maths homework due tomorrow'],
    ['3:15 PM - Coach Davis: Fitness log due Monday', 'Fitness log due Monday'],
    ['Mrs. Okafor (Mar 3, 4:15 PM): Article summary due Monday', 'Article summary due Monday'],
  ])('skips greetings and chat headers: %j', (text, title) => {
    expect(titleOf(text)).toBe(title);
  });

  it.each([
    ['Subject: Unit 5 test corrections\n\nHi all,', 'Unit 5 test corrections'],
    ['Re: Fwd: Field trip forms', 'Field trip forms'],
    ['Reminder — the trip money is due by Friday', 'The trip money is due by Friday'],
    ['Deadline: Friday 6pm\nUpload your slides.', 'Upload your slides'],
    ['Due by 9pm tonight: upload your video', 'Upload your video'],
    ['Due 3/10 at 11:59pm: chapter 6 outline', 'Chapter 6 outline'],
    ['English essay: deadline 31 Jan, 12 noon', 'English essay'],
    ['**Assignment 3 – Persuasive letter**', 'Assignment 3 – Persuasive letter'],
    ['# Lab 2: Sorting', 'Lab 2: Sorting'],
  ])('skips labels and decoration: %j', (text, title) => {
    expect(titleOf(text)).toBe(title);
  });

  it('takes the first sentence, not cut at abbreviations', () => {
    expect(titleOf('Republic Day celebrations on 26th January. Attendance is compulsory.')).toBe(
      'Republic Day celebrations on 26th January',
    );
    expect(titleOf('Math homework p. 45 #1-19 odd')).toBe('Math homework p. 45 #1-19 odd');
    expect(titleOf('Research paper due at 10 a.m. on Friday')).toBe(
      'Research paper due at 10 a.m. on Friday',
    );
  });

  it('cuts at 80 characters, at a word', () => {
    const text =
      'Please complete the online safety module on the school portal and take a screenshot of your certificate';
    expect(titleOf(text)).toBe('Please complete the online safety module on the school portal and take a…');
    expect([...titleOf(text)!].length).toBeLessThanOrEqual(80);
    expect(toMarkdown(text, deriveTitle(text).line)).toBe(text);
  });

  it('answers null when no line states a subject', () => {
    expect(titleOf('Hi class!\n\n')).toBeNull();
  });
});

describe('toMarkdown', () => {
  it('leaves out the line the title took whole, and keeps a line the title took part of', () => {
    const text = 'Hi class!\nSubject: Essay\nWrite 300 words.';
    expect(toMarkdown(text, deriveTitle(text).line)).toBe('Hi class!\n\nWrite 300 words.');
    const long = 'Essay on the sea. Write 300 words.';
    expect(deriveTitle(long)).toEqual({ title: 'Essay on the sea', line: null });
    expect(toMarkdown(long, deriveTitle(long).line)).toBe(long);
  });
});
