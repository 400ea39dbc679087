#!/usr/bin/perl
# The oracle for 'nytp dump --data': Devel::NYTProf::Data loads FILE
# without collapsing evals and prints dump_profile_data with a TAB
# separator.  Exit status 0, or 1 if the loader died (message on stderr).
use strict;
use warnings;
use Devel::NYTProf::Data;

my $file = shift // 'nytprof.out';
binmode STDOUT;
my $ok = eval {
    my $p = Devel::NYTProf::Data->new({ filename => $file, quiet => 1, skip_collapse_evals => 1 });
    $p->dump_profile_data({ separator => "\t" });
    1;
};
if (!$ok) {
    my $e = $@;
    $e =~ s/\s+\z//;
    print STDERR "oracle: $e\n";
    exit 1;
}
exit 0;
