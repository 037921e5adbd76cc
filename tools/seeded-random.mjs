// The project's one seeded random generator (mulberry32) for scripts and
// tests: the library's own (web/lib/model/seeded-random.js, which
// model.inductionScores draws its tokens with), so a seed gives the same
// numbers everywhere. Tests already import from tools/; tools never import
// from tests.
export { seededRandom } from '../web/lib/model/seeded-random.js';
