/* Instantiates the header that MG_IMPL names in both precisions: REAL double
 * with suffix d, then REAL float with suffix f. No include guard: one
 * inclusion per header instantiated. */
#define REAL double
#define SFX d
#include MG_IMPL
#undef REAL
#undef SFX
#define REAL float
#define SFX f
#include MG_IMPL
#undef REAL
#undef SFX
#undef MG_IMPL
