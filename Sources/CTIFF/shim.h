#include <tiffio.h>
