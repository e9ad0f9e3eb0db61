# Ruby that read unbalanced before 0.3 (lines from Ruby's own library)
def rake_require(file_name, paths = $LOAD_PATH, loaded = $")
  $".push file_name
end
words = %w(<%% <%= <%# <%)
cmd = %W[--#{words[0]} #{words[1]} --seed 42]
pattern = %r{/(rubygems/gem_runner|bundler/cli)\.rb}
literal = %Q{((?:"[^"]*")|(?:'[^']*'))}
message = "[\"#{words.join "\", \""}\"] are not files"
paren = %(#{cmd} could not find "#{literal}":)
puts %(@ECHO.#{message})
rest = $'
url = "x"
url = url.start_with?(?/) ? url : ?/ + url
same = url[0] != ?)
ratio = 7 % (2)
def shown(x) = "(#{x}"
ARRAY_REGEX = /
  ^(?:[ ]*-[ ]) # '- ' before array items (
  (['"]?)       # optional opening quote [
  \1 #{x.to_s}
/xo.freeze
half = 7 /
  2
def /(x); [:/, x] end
link = "x" if url and %r%\A((?!https?:)(?:[^/#]*/)*+)([^/#]+)%i =~ url
link = link.sub %r%^[*\^](\d+)$%, '\1'
