#include "checkers/metrics.h"
