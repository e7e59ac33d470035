const words = ['', 'Sorry to hear that.', 'Could be better.', 'Fine, thanks.', 'Lovely!', 'Perfect stay!'];
let rating = 0;
document.querySelectorAll('.star').forEach((star) => {
  star.addEventListener('click', () => {
    rating = Number(star.dataset.value);
    document.querySelectorAll('.star').forEach((s) => s.classList.toggle('on', Number(s.dataset.value) <= rating));
    document.getElementById('verdict').textContent = 'You rated ' + rating + '/5: ' + words[rating];
  });
});
document.getElementById('send').addEventListener('click', () => {
  const thanks = document.getElementById('thanks');
  thanks.textContent = rating ? 'Thank you, your ' + rating + '-star review was sent.' : 'Please pick a rating first.';
  thanks.classList.remove('hidden');
});
