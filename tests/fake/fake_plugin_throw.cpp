// fake_plugin.c as C++, its can_implement throwing
#define FAKE_PLUGIN_THROW 1
#define FAKE_PLUGIN_NAME "fakethrow"
#include "fake_plugin.c"
