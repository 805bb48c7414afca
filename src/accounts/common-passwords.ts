/**
 * Common passwords, generated rather than shipped as a blob: the most used base words of public
 * breach-corpus top lists, with the suffixes and spellings people add to reach a length rule
 * (digits, years, "!", capitals, leetspeak). A few thousand entries; compared case-insensitively.
 */
const BASE_WORDS = `
password passw0rd p@ssword p@ssw0rd passwort motdepasse contraseña qwerty qwertyuiop qwertz azerty asdfgh
asdfghjkl zxcvbnm zxcvbn 1q2w3e4r 1q2w3e4r5t 1qaz2wsx qazwsx qweasd qweasdzxc abc123 abcdef abcdefg abcd1234
letmein welcome welcome1 monkey dragon master shadow sunshine princess football baseball basketball soccer
hockey superman batman iloveyou trustno1 starwars whatever freedom michael jennifer jordan hunter ranger
buster thomas robert soccer1 charlie andrew michelle daniel jessica pepper ginger summer winter spring autumn
orange banana cheese computer internet killer hello hello123 secret secret123 admin administrator root
changeme default guest login access letmein1 mustang harley cookie flower purple yellow silver golden diamond
chocolate butterfly pokemon minecraft fortnite naruto samsung google apple iphone android linux windows
microsoft facebook instagram twitter youtube netflix spotify amazon company office business customer
manager service support server database security system network london paris berlin newyork tokyo
america canada germany france england london123 lovely loveme love123 babygirl angel angels sweety
tigger snoopy garfield scooter maggie bailey sophie chelsea arsenal liverpool barcelona madrid juventus
qwerty123 qwe123 asd123 zaq12wsx 1234qwer q1w2e3r4 q1w2e3r4t5 aa123456 a123456 password1 password12
password123 letmein123 welcome123 admin123 root123 test test123 testing demo sample example
`;

const SEQUENCES = [
  '1234567890',
  '0123456789',
  '0987654321',
  '9876543210',
  '12345678910',
  '1111111111',
  '0000000000',
  '1212121212',
  '1122334455',
  '1234512345',
  '123123123123',
  'abcdefghij',
  'qwertyuiop',
  'asdfghjkl;',
  'aaaaaaaaaa',
  'qwerty12345',
  'password1234',
  'iloveyou123',
];

const SUFFIXES = [
  '',
  '1',
  '12',
  '123',
  '1234',
  '12345',
  '123456',
  '!',
  '1!',
  '123!',
  '01',
  '007',
  '69',
  '99',
  '00',
  '@123',
  '#1',
];

function leet(word: string): string {
  return word.replace(/a/g, '@').replace(/o/g, '0').replace(/e/g, '3').replace(/i/g, '1').replace(/s/g, '$');
}

function build(): Set<string> {
  const out = new Set<string>(SEQUENCES);
  const words = BASE_WORDS.split(/\s+/).filter(Boolean);
  for (const word of words) {
    const forms = new Set([word, leet(word), word + word]);
    for (const form of forms) {
      for (const suffix of SUFFIXES) out.add(form + suffix);
      for (let year = 1960; year <= 2030; year++) out.add(form + year);
    }
  }
  return new Set([...out].map((p) => p.toLowerCase()));
}

let list: Set<string> | undefined;

export function isCommonPassword(password: string): boolean {
  list ??= build();
  return list.has(password.toLowerCase());
}

export function commonPasswordCount(): number {
  list ??= build();
  return list.size;
}
