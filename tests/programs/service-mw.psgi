# tests/programs/service.psgi behind Plack::Middleware::NYTP (for
# tests/45-middleware.t): requests with "X-NYTP-Profile: sesame" are
# profiled, and one in NYTP_MW_EVERY of each worker (0: none), into
# NYTP_MW_DIR.
use strict;
use warnings;
use Plack::Builder;
use Plack::Util;
use File::Basename ();

my $inner = Plack::Util::load_psgi(File::Basename::dirname(__FILE__) . '/service.psgi');
builder {
    enable 'NYTP', every => $ENV{NYTP_MW_EVERY} // 0, header => 'X-NYTP-Profile',
        token => 'sesame', dir => $ENV{NYTP_MW_DIR};
    $inner;
};
