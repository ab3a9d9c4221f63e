// zlib (Debian's zlib1g-dev), for its CRC-32: the geocoder checks its data file with it. The
// binary already loads libz.so.1 for Foundation, so linking it costs no start-up.
#include <zlib.h>
