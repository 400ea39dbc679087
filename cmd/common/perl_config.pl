#!/usr/bin/perl
# Writes perl_config.h for the build: the @INC and version of the system
# perl, which 'nytp dump --data' strips from file names by default, as
# Devel::NYTProf's own dumper does with the perl that runs it.
use strict;
use warnings;
use Config;

my @inc = grep { m{^/} && !/["\\]/ } @INC;
printf qq{#define NYTP_PERL_INC "%s"\n#define NYTP_PERL_VERSION "%s"\n},
    join(':', @inc), $Config{version};
