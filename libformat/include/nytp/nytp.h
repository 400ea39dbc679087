/* nytp/nytp.h — everything libformat offers, in one include. */
#ifndef NYTP_NYTP_H
#define NYTP_NYTP_H

#include "nytp/codec.h"
#include "nytp/dprof.h"
#include "nytp/error.h"
#include "nytp/io.h"
#include "nytp/reader.h"
#include "nytp/writer.h"

#define NYTP_VERSION_STRING "0.1.0"

#endif
