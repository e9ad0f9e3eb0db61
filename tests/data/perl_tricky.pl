use strict;
if ($] >= 5.010) { print "new"; }
local($") = ' ';
my @w = qw[a ( b];
my $s = "x"; $s =~ s{\(}{[}g;
my $f = "a"; $f =~ s,[/\\]+,/,g;
$s =~ tr/(/[/;
my $gid = (split ' ', $) )[0];
sub max2($$) { return 1 }
my %h = (y => 1, s => 2); print $h{y}; print -s $f;
print(<<EOT, $s);
text (
EOT
my $re = qr{ ( [a-z]+ ) }x;
if ($s =~ / ^
            ( [(a-z]+ )   # a word
          /x) { print "w"; }
my $c = shift // 'debian/control';
my @chars = split //, $c;
my ($gid, $egid) = ($(, $));
my $proto = '$';
eval '
sub hex2(' . $proto . ') {' . <<'.';
    return hex($_[0]);
}
.
1;
__END__
=head1 it's (
