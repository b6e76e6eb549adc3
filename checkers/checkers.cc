#include "checkers/checker.h"
